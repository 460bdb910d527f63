/**
 * The kernel's requests as a front end answers them (`DocumentHub`), across
 * browser tabs (a BroadcastChannel stand-in), and the kernel comm that
 * carries them (`KernelLink`, with a fake kernel connection).
 */

import type { YNotebook } from '@jupyter/ydoc';
import type * as nbformat from '@jupyterlab/nbformat';
import type { Kernel, KernelMessage } from '@jupyterlab/services';
import { Signal } from '@lumino/signaling';

import type { IGuard } from '../src/livecells';
import {
  DocumentHub,
  IOpenDocument,
  IPeerPort,
  KernelLink,
  TARGET
} from '../src/liveedits';
import { ids, sharedNotebook, sourceOf } from './livenotebook';

type Json = { [key: string]: unknown };

class Doc implements IOpenDocument {
  editing: string | null = null;
  busy = new Set<string>();
  shared = false;
  readOnly = false;

  constructor(
    readonly token: string,
    public path: string,
    readonly model: YNotebook
  ) {}

  guard(): IGuard {
    return { editing: this.editing, busy: this.busy };
  }

  toJSON(): nbformat.INotebookContent {
    return this.model.toJSON();
  }
}

/** A document that says which kernel it is connected to (null: none), as the tracker's documents do. */
class KernelDoc extends Doc {
  constructor(
    token: string,
    path: string,
    model: YNotebook,
    public connectedTo: string | null
  ) {
    super(token, path, model);
  }

  kernel(): string | null {
    return this.connectedTo;
  }
}

function notebook(): YNotebook {
  return sharedNotebook([
    { id: 'a', source: 'a = 1\n' },
    { id: 'b', source: 'b = 2\n' }
  ]);
}

/** Tabs of one browser: what one posts, the others receive (a BroadcastChannel does not echo). */
class Browser {
  private readonly listeners: Array<(message: Json) => void> = [];
  deaf = new Set<number>(); // tabs that stopped answering (frozen, or gone without a word)

  port(): IPeerPort {
    const index = this.listeners.length;
    this.listeners.push(() => undefined);
    return {
      post: message =>
        setTimeout(() => {
          this.listeners.forEach((listen, i) => {
            if (i !== index && !this.deaf.has(i)) {
              listen(JSON.parse(JSON.stringify(message)) as Json);
            }
          });
        }, 1),
      listen: handler => {
        this.listeners[index] = handler;
      }
    };
  }
}

const settle = (ms = 20) => new Promise(done => setTimeout(done, ms));

describe('DocumentHub', () => {
  it('claims its documents by path and reads them as shown, with who is typing and what runs', async () => {
    const doc = new Doc('t1', 'nb/analysis.ipynb', notebook());
    doc.editing = 'a';
    doc.busy.add('b');
    const hub = new DocumentHub('app1', 'JupyterLab', () => [doc]);
    expect(
      await hub.handle({ type: 'claim', path: 'nb/analysis.ipynb' })
    ).toEqual({
      type: 'claimed',
      docs: [{ app: 'app1', doc: 't1', shared: false, where: 'JupyterLab' }]
    });
    expect(await hub.handle({ type: 'claim', path: 'analysis.ipynb' })).toEqual(
      { type: 'claimed', docs: [] }
    );
    const state = await hub.handle({
      type: 'read',
      app: 'app1',
      doc: 't1',
      path: 'nb/analysis.ipynb'
    });
    expect(state.ok).toBe(true);
    expect(
      (state.notebook as nbformat.INotebookContent).cells.map(c => c.id)
    ).toEqual(['a', 'b']);
    expect(state.editing).toBe('a');
    expect(state.busy).toEqual(['b']);
  });

  it('applies operations, and refuses what it must with a code the kernel understands', async () => {
    const doc = new Doc('t1', 'nb.ipynb', notebook());
    const hub = new DocumentHub('app1', 'JupyterLab', () => [doc]);
    const target = { app: 'app1', doc: 't1', path: 'nb.ipynb' };
    const edit = { op: 'edit', id: 'a', source: 'a = 10\n', expect: 'a = 1\n' };
    expect(
      await hub.handle({
        type: 'apply',
        ...target,
        ops: [edit],
        protect: ['b']
      })
    ).toEqual({ ok: true });
    expect(sourceOf(doc.model, 'a')).toBe('a = 10\n');

    const protectedCell = await hub.handle({
      type: 'apply',
      ...target,
      ops: [{ op: 'delete', id: 'b', expect: 'b = 2\n' }],
      protect: ['b']
    });
    expect(protectedCell).toMatchObject({ ok: false, code: 'running' });
    const stale = await hub.handle({ type: 'apply', ...target, ops: [edit] });
    expect(stale).toMatchObject({ ok: false, code: 'changed' });
    const malformed = await hub.handle({
      type: 'apply',
      ...target,
      ops: 'delete everything'
    });
    expect(malformed).toMatchObject({ ok: false, code: 'bad' });

    doc.readOnly = true;
    const readOnly = await hub.handle({
      type: 'apply',
      ...target,
      ops: [{ op: 'delete', id: 'b', expect: 'b = 2\n' }]
    });
    expect(readOnly).toMatchObject({ ok: false, code: 'readonly' });
    expect(ids(doc.model)).toEqual(['a', 'b']);
  });

  it('says so when the notebook was closed or renamed since it was claimed', async () => {
    let docs = [new Doc('t1', 'nb.ipynb', notebook())];
    const hub = new DocumentHub('app1', 'Jupyter Notebook', () => docs);
    docs[0].path = 'renamed.ipynb';
    const renamed = await hub.handle({
      type: 'read',
      app: 'app1',
      doc: 't1',
      path: 'nb.ipynb'
    });
    expect(renamed).toMatchObject({ ok: false, code: 'renamed' });
    expect(String(renamed.error)).toContain("'renamed.ipynb'");
    docs = [];
    const closed = await hub.handle({
      type: 'read',
      app: 'app1',
      doc: 't1',
      path: 'renamed.ipynb'
    });
    expect(closed).toMatchObject({ ok: false, code: 'closed' });
  });

  it('finds and changes a notebook open in another tab of the browser, and only there', async () => {
    const browser = new Browser();
    const mine = new Doc('m1', 'a.ipynb', notebook());
    const theirs = new Doc('o1', 'b.ipynb', notebook());
    const hub = new DocumentHub(
      'tab1',
      'Jupyter Notebook',
      () => [mine],
      browser.port()
    );
    const other = new DocumentHub(
      'tab2',
      'Jupyter Notebook',
      () => [theirs],
      browser.port()
    );
    await settle();
    const claimed = await hub.handle({ type: 'claim', path: 'b.ipynb' });
    expect(claimed.docs).toEqual([
      { app: 'tab2', doc: 'o1', shared: false, where: 'Jupyter Notebook' }
    ]);
    const answer = await hub.handle({
      type: 'apply',
      app: 'tab2',
      doc: 'o1',
      path: 'b.ipynb',
      ops: [{ op: 'delete', id: 'b', expect: 'b = 2\n' }]
    });
    expect(answer).toEqual({ ok: true });
    expect(ids(theirs.model)).toEqual(['a']);
    expect(ids(mine.model)).toEqual(['a', 'b']);
    expect(other.app).toBe('tab2');
  });

  it('waits a bounded time for a tab that stopped answering, then forgets it', async () => {
    const browser = new Browser();
    const hub = new DocumentHub(
      'tab1',
      'Jupyter Notebook',
      () => [],
      browser.port(),
      100
    );
    new DocumentHub(
      'tab2',
      'Jupyter Notebook',
      () => [new Doc('o1', 'b.ipynb', notebook())],
      browser.port(),
      100
    );
    await settle();
    browser.deaf.add(1);
    const started = Date.now();
    expect(await hub.handle({ type: 'claim', path: 'b.ipynb' })).toEqual({
      type: 'claimed',
      docs: []
    });
    expect(Date.now() - started).toBeLessThan(1000);
    const relayed = await hub.handle({
      type: 'read',
      app: 'tab2',
      doc: 'o1',
      path: 'b.ipynb'
    });
    expect(relayed).toMatchObject({ ok: false, code: 'closed' });
  });

  it('forgets a tab that says goodbye', async () => {
    const browser = new Browser();
    const hub = new DocumentHub('tab1', 'JupyterLab', () => [], browser.port());
    const other = new DocumentHub(
      'tab2',
      'JupyterLab',
      () => [new Doc('o1', 'b.ipynb', notebook())],
      browser.port()
    );
    await settle();
    other.leave();
    await settle();
    const started = Date.now();
    expect((await hub.handle({ type: 'claim', path: 'b.ipynb' })).docs).toEqual(
      []
    );
    expect(Date.now() - started).toBeLessThan(100); // nobody left to wait for
  });
});

/** Where the docs of a `located` answer are: [app, doc, path]. */
function placesOf(answer: Json): [unknown, unknown, unknown][] {
  return (answer.docs as Json[]).map(doc => [doc.app, doc.doc, doc.path]);
}

describe('running (the cell a server ran, by its source)', () => {
  it('answers with the running cells of that source, on the kernel that asks', async () => {
    const exam = new KernelDoc('e1', 'exam.ipynb', notebook(), 'k-exam');
    const copy = new KernelDoc('c1', 'copy.ipynb', notebook(), 'k-copy');
    exam.busy.add('a');
    copy.busy.add('a');
    const hub = new DocumentHub('tab1', 'JupyterLab', () => [copy, exam]);
    const cells = async (source: string, kernel: string) =>
      (
        (await hub.handle({ type: 'running', source }, kernel)).docs as Json[]
      ).map(doc => [doc.doc, doc.path, doc.cell]);
    // Trailing whitespace aside (IPython's history ends a cell with one newline).
    expect(await cells('a = 1', 'k-exam')).toEqual([['e1', 'exam.ipynb', 'a']]);
    expect(await cells('a = 1\n\n', 'k-copy')).toEqual([
      ['c1', 'copy.ipynb', 'a']
    ]);
    // Not running, another source, no source: nothing.
    expect(await cells('b = 2', 'k-exam')).toEqual([]);
    expect(await cells('a = 2', 'k-exam')).toEqual([]);
    expect(await cells('', 'k-exam')).toEqual([]);
  });

  it('asks the other tabs of the browser too', async () => {
    const browser = new Browser();
    const here = new DocumentHub(
      'tab1',
      'JupyterLab',
      () => [],
      browser.port()
    );
    const shown = new KernelDoc('t2', 'nb/run.ipynb', notebook(), 'k1');
    shown.busy.add('b');
    new DocumentHub('tab2', 'Notebook 7', () => [shown], browser.port());
    await settle(); // the tabs know each other
    const answer = await here.handle(
      { type: 'running', source: 'b = 2\n' },
      'k1'
    );
    expect(answer).toEqual({
      type: 'running',
      docs: [
        {
          app: 'tab2',
          doc: 't2',
          path: 'nb/run.ipynb',
          cell: 'b',
          where: 'Notebook 7'
        }
      ]
    });
  });
});

describe('locate (the notebook of a running cell, by its id)', () => {
  // Two notebooks copied from one template: the same cell ids, each on its own kernel.
  const exam = () => new KernelDoc('e1', 'exam.ipynb', notebook(), 'k-exam');
  const copy = () => new KernelDoc('c1', 'copy.ipynb', notebook(), 'k-copy');

  it('answers only with the documents connected to the kernel that asks', async () => {
    const hub = new DocumentHub('tab1', 'JupyterLab', () => [copy(), exam()]);
    const asked = (kernel: string) =>
      hub.handle({ type: 'locate', cell: 'a' }, kernel);
    expect(placesOf(await asked('k-exam'))).toEqual([
      ['tab1', 'e1', 'exam.ipynb']
    ]);
    expect(placesOf(await asked('k-copy'))).toEqual([
      ['tab1', 'c1', 'copy.ipynb']
    ]);
    // A kernel none of them is connected to, and a document connected to none, find nothing.
    expect(await asked('k-other')).toEqual({ type: 'located', docs: [] });
    const idle = new KernelDoc('i1', 'idle.ipynb', notebook(), null);
    const alone = new DocumentHub('tab2', 'JupyterLab', () => [idle]);
    expect(await alone.handle({ type: 'locate', cell: 'a' }, 'k-exam')).toEqual(
      { type: 'located', docs: [] }
    );
  });

  it('is ambiguous, naming no document, when the cell is in notebooks at different paths', async () => {
    // On one kernel (a notebook connected to another's kernel), or asked without knowing the kernel.
    const shared = new KernelDoc('c1', 'copy.ipynb', notebook(), 'k-exam');
    const hub = new DocumentHub('tab1', 'JupyterLab', () => [shared, exam()]);
    const ambiguous = { type: 'located', docs: [], ambiguous: true };
    expect(await hub.handle({ type: 'locate', cell: 'a' }, 'k-exam')).toEqual(
      ambiguous
    );
    const unknown = new DocumentHub('tab2', 'JupyterLab', () => [
      copy(),
      exam()
    ]);
    expect(await unknown.handle({ type: 'locate', cell: 'b' })).toEqual(
      ambiguous
    );
    // A cell only one of them has is not ambiguous.
    const own = new KernelDoc(
      'e1',
      'exam.ipynb',
      sharedNotebook([{ id: 'own', source: '%%architect\nsolve it' }]),
      'k-exam'
    );
    const one = new DocumentHub('tab3', 'JupyterLab', () => [shared, own]);
    expect(
      placesOf(await one.handle({ type: 'locate', cell: 'own' }, 'k-exam'))
    ).toEqual([['tab3', 'e1', 'exam.ipynb']]);
  });

  it('asks the other tabs for the same kernel, and one notebook open in two tabs is not ambiguous', async () => {
    const browser = new Browser();
    const hub = new DocumentHub(
      'tab1',
      'Jupyter Notebook',
      () => [exam()],
      browser.port()
    );
    let theirs: Doc[] = [copy(), exam()];
    new DocumentHub('tab2', 'Jupyter Notebook', () => theirs, browser.port());
    await settle();
    const answer = await hub.handle({ type: 'locate', cell: 'a' }, 'k-exam');
    expect(answer.ambiguous).toBeUndefined();
    expect(placesOf(answer)).toEqual([
      ['tab1', 'e1', 'exam.ipynb'],
      ['tab2', 'e1', 'exam.ipynb']
    ]);
    // A tab that cannot say which kernel its documents are on (as an older version, which does not
    // filter) names the copy too: ambiguous.
    theirs = [new Doc('c1', 'copy.ipynb', notebook())];
    expect(await hub.handle({ type: 'locate', cell: 'a' }, 'k-exam')).toEqual({
      type: 'located',
      docs: [],
      ambiguous: true
    });
  });
});

/** A kernel connection as `KernelLink` uses it. */
class FakeKernel {
  readonly id = 'k1';
  readonly statusChanged = new Signal<this, KernelMessage.Status>(this);
  isDisposed = false;
  target: ((comm: unknown, msg: unknown) => void) | null = null;
  comms: FakeComm[] = [];

  registerCommTarget(
    name: string,
    callback: (comm: unknown, msg: unknown) => void
  ): void {
    expect(name).toBe(TARGET);
    this.target = callback;
  }

  removeCommTarget(): void {
    this.target = null;
  }

  createComm(target: string): FakeComm {
    const comm = new FakeComm(target);
    this.comms.push(comm);
    return comm;
  }

  get last(): FakeComm {
    return this.comms[this.comms.length - 1];
  }
}

class FakeComm {
  isDisposed = false;
  opened: Json | null = null;
  sent: Json[] = [];
  closedByUs = false;
  onMsg: (msg: KernelMessage.ICommMsgMsg) => void = () => undefined;
  onClose: (msg: KernelMessage.ICommCloseMsg) => void = () => undefined;

  constructor(readonly target: string) {}

  open(data: Json): void {
    this.opened = data;
  }

  send(data: Json): void {
    this.sent.push(data);
  }

  close(): void {
    this.closedByUs = true;
    this.isDisposed = true;
  }

  /** The kernel sends a comm message. */
  receive(data: Json): void {
    this.onMsg({
      content: { comm_id: 'c', data }
    } as unknown as KernelMessage.ICommMsgMsg);
  }

  /** The kernel closes the comm. */
  closeFromKernel(): void {
    this.isDisposed = true;
    this.onClose({} as KernelMessage.ICommCloseMsg);
  }
}

function link(kernel: FakeKernel, hub: DocumentHub): KernelLink {
  return new KernelLink(kernel as unknown as Kernel.IKernelConnection, hub, {
    app: hub.app,
    where: hub.where,
    root: '~/work',
    outputs: 'server',
    session: () => 'nb/demo.ipynb'
  });
}

describe('KernelLink', () => {
  it('opens its comm saying who it is, and answers requests with their number', async () => {
    const doc = new Doc('t1', 'nb/demo.ipynb', notebook());
    const kernel = new FakeKernel();
    link(kernel, new DocumentHub('app1', 'JupyterLab', () => [doc]));
    expect(kernel.last.target).toBe(TARGET);
    expect(kernel.last.opened).toEqual({
      type: 'client',
      protocol: 1,
      app: 'app1',
      where: 'JupyterLab',
      root: '~/work',
      outputs: 'server',
      session: 'nb/demo.ipynb'
    });
    kernel.last.receive({ type: 'welcome', protocol: 1 });
    kernel.last.receive({ type: 'claim', path: 'nb/demo.ipynb', req: 7 });
    await settle();
    expect(kernel.last.sent).toEqual([
      {
        type: 'claimed',
        docs: [{ app: 'app1', doc: 't1', shared: false, where: 'JupyterLab' }],
        req: 7
      }
    ]);
  });

  it('locates a cell among the documents connected to its own kernel only', async () => {
    const mine = new KernelDoc('m1', 'exam.ipynb', notebook(), 'k1');
    const other = new KernelDoc('o1', 'copy.ipynb', notebook(), 'k2');
    const kernel = new FakeKernel();
    link(kernel, new DocumentHub('app1', 'JupyterLab', () => [other, mine]));
    kernel.last.receive({ type: 'welcome', protocol: 1 });
    kernel.last.receive({ type: 'locate', cell: 'a', req: 3 });
    await settle();
    expect(kernel.last.sent).toEqual([
      {
        type: 'located',
        docs: [
          {
            app: 'app1',
            doc: 'm1',
            path: 'exam.ipynb',
            shared: false,
            where: 'JupyterLab'
          }
        ],
        req: 3
      }
    ]);
  });

  it('opens again on hello when a kernel without architect_nb refused it, not before', () => {
    const kernel = new FakeKernel();
    link(kernel, new DocumentHub('app1', 'JupyterLab', () => []));
    kernel.last.closeFromKernel(); // no such comm target in that kernel
    expect(kernel.comms).toHaveLength(1);
    kernel.statusChanged.emit('idle');
    expect(kernel.comms).toHaveLength(1); // no retry on every idle: each would log an error in the kernel
    kernel.target?.({}, {}); // %load_ext architect_nb says hello
    expect(kernel.comms).toHaveLength(2);
    expect(kernel.last.opened?.type).toBe('client');
  });

  it('comes back at once when a kernel that had accepted it drops it, and after a restart', async () => {
    const kernel = new FakeKernel();
    link(kernel, new DocumentHub('app1', 'JupyterLab', () => []));
    kernel.last.receive({ type: 'welcome', protocol: 1 });
    kernel.last.closeFromKernel(); // it timed out waiting for us once
    await settle();
    expect(kernel.comms).toHaveLength(2);
    kernel.statusChanged.emit('restarting');
    kernel.statusChanged.emit('starting');
    expect(kernel.comms).toHaveLength(2);
    kernel.statusChanged.emit('idle');
    expect(kernel.comms).toHaveLength(3);
  });

  it('closes its comm and forgets the target when disposed', () => {
    const kernel = new FakeKernel();
    const kernelLink = link(
      kernel,
      new DocumentHub('app1', 'JupyterLab', () => [])
    );
    kernelLink.dispose();
    expect(kernel.last.closedByUs).toBe(true);
    expect(kernel.target).toBeNull();
    kernel.statusChanged.emit('restarting');
    kernel.statusChanged.emit('idle');
    expect(kernel.comms).toHaveLength(1);
  });
});
