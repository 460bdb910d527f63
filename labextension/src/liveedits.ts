/**
 * Live edits: the kernel's notebook tools read and change the notebooks open
 * here, through their document model, instead of writing the file under the
 * editor (`architect_nb/notebook/kernel/live_documents.py` is the kernel's end).
 *
 * For each kernel a notebook here is connected to, one comm (target
 * `architect-nb-documents`) says which front end this is and where its
 * server's root is. It opens when the kernel connection starts, after a
 * restart, and when the kernel says hello (it loaded architect_nb); a kernel
 * without architect_nb refuses it, and the next hello opens it again. The
 * kernel asks who has a notebook open (`claim`, by path; `locate`, by a cell's
 * id: the notebook of the running `%%architect` cell; `running`, by a running
 * cell's source, where the server ran it and sent no id), then reads it (with
 * the cells edited since they ran, and the cell selected when a cell was run)
 * or applies cell operations to it (`livecells.ts`). Each browser tab answers for its own
 * documents and asks the other tabs of the same browser over a
 * BroadcastChannel, so a notebook open in another Notebook 7 tab is found and
 * changed too.
 *
 * Notebooks copied from one template share their cell ids, so `locate` answers
 * only with the documents connected to the kernel that asks; when those still
 * hold the cell at different paths, the answer is `ambiguous` with no
 * documents, and the kernel reads the notebook's file instead of guessing.
 */

import type * as nbformat from '@jupyterlab/nbformat';
import type { ISharedNotebook } from '@jupyter/ydoc';
import type { Kernel, KernelMessage } from '@jupyterlab/services';
import type { JSONObject } from '@lumino/coreutils';

import { applyOps, CellOpError, IGuard, parseOps } from './livecells';

export const TARGET = 'architect-nb-documents';
export const PROTOCOL = 1;
/** How long the tab the kernel asked waits for the other tabs of the browser. */
export const PEER_TIMEOUT_MS = 2000;

type Json = { [key: string]: unknown };

/** A notebook open in this tab (several views of one document are one). */
export interface IOpenDocument {
  /** Stable for as long as the document is open here. */
  readonly token: string;
  /** Relative to the server's root, as the kernel names it. */
  readonly path: string;
  /** Edits reach other front ends through a shared model (real-time collaboration). */
  readonly shared: boolean;
  readonly readOnly: boolean;
  readonly model: ISharedNotebook;
  /**
   * The id of the kernel the document is connected to (null: none). A source
   * that cannot say leaves it out, and then any kernel finds the document by a
   * cell's id.
   */
  kernel?(): string | null;
  /** The cell being typed in, and the cells running, now. */
  guard(): IGuard;
  toJSON(): nbformat.INotebookContent;
  /** Code cells edited since they ran, where the front end tracks it. */
  dirty?(): string[];
  /** The cell that was selected when the cell `cellId` was run here, if known. */
  selectedWhenRun?(cellId: string): string | null;
  /** The cell got the outputs of its source (run_cell): no longer edited since it ran. */
  markRun?(cellId: string): void;
}

/** The documents open in this tab, now. */
export type DocumentSource = () => IOpenDocument[];

/** Where other tabs of this browser are reached (a BroadcastChannel). */
export interface IPeerPort {
  post(message: Json): void;
  listen(handler: (message: Json) => void): void;
}

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Answers the kernel's requests for the documents of this tab, and of the tabs it can reach. */
export class DocumentHub {
  private readonly peers = new Set<string>();
  private readonly waiting = new Map<string, (answer: Json) => void>();
  private serial = 0;

  constructor(
    readonly app: string,
    readonly where: string,
    private readonly documents: DocumentSource,
    private readonly port: IPeerPort | null = null,
    private readonly peerTimeout = PEER_TIMEOUT_MS
  ) {
    if (port !== null) {
      port.listen(message => this.onPeer(message));
      port.post({ t: 'hello', from: app });
    }
  }

  /** Tell the other tabs this one is going (the page is being left). */
  leave(): void {
    this.port?.post({ t: 'bye', from: this.app });
  }

  /**
   * Answer one request of a kernel (`kernel`: its id, when the comm it came
   * by is known); never rejects.
   */
  async handle(request: Json, kernel: string | null = null): Promise<Json> {
    try {
      if (request.type === 'claim') {
        const docs = await this.withPeers(
          this.claims(String(request.path ?? '')),
          { type: 'claim', path: request.path }
        );
        return { type: 'claimed', docs };
      }
      if (request.type === 'locate') {
        const docs = await this.withPeers(
          this.located(String(request.cell ?? ''), kernel),
          { type: 'locate', cell: request.cell, kernel }
        );
        // One notebook in several tabs is one path; different paths would be a guess (an older tab does
        // not filter by kernel, and two notebooks on one kernel may share a template's ids).
        if (new Set(docs.map(doc => String(doc.path ?? ''))).size > 1) {
          return { type: 'located', docs: [], ambiguous: true };
        }
        return { type: 'located', docs };
      }
      if (request.type === 'running') {
        const docs = await this.withPeers(
          this.running(String(request.source ?? ''), kernel),
          { type: 'running', source: request.source, kernel }
        );
        return { type: 'running', docs };
      }
      if (request.app !== this.app) {
        return await this.relay(request);
      }
      return this.local(request);
    } catch (error) {
      return { ok: false, error: `The front end failed: ${String(error)}` };
    }
  }

  /** `docs` (this tab's answer to `question`) and the other tabs' answers to it. */
  private async withPeers(docs: Json[], question: Json): Promise<Json[]> {
    for (const answer of await this.askPeers(question)) {
      if (Array.isArray(answer.docs)) {
        docs.push(...answer.docs.filter(isRecord));
      }
    }
    return docs;
  }

  /** This tab's documents at `path`. */
  claims(path: string): Json[] {
    return this.documents()
      .filter(doc => doc.path === path)
      .map(doc => ({
        app: this.app,
        doc: doc.token,
        shared: doc.shared,
        where: this.where
      }));
  }

  /**
   * This tab's documents that hold the cell `cellId`, with their paths; with
   * `kernel`, only those connected to that kernel.
   */
  located(cellId: string, kernel: string | null = null): Json[] {
    if (cellId === '') {
      return [];
    }
    return this.onKernel(kernel)
      .filter(doc => doc.model.cells.some(cell => cell.getId() === cellId))
      .map(doc => ({
        app: this.app,
        doc: doc.token,
        path: doc.path,
        shared: doc.shared,
        where: this.where
      }));
  }

  /**
   * The running cells of this tab's documents (on `kernel`, when given) whose
   * source is `source`: how a kernel finds the cell it runs when the server
   * ran it and sent no cell id (jupyter-server-documents).
   */
  running(source: string, kernel: string | null = null): Json[] {
    const wanted = source.trimEnd();
    if (wanted === '') {
      return [];
    }
    return this.onKernel(kernel).flatMap(doc => {
      const busy = doc.guard().busy;
      return doc.model.cells
        .filter(
          cell =>
            busy.has(cell.getId()) && cell.getSource().trimEnd() === wanted
        )
        .map(cell => ({
          app: this.app,
          doc: doc.token,
          path: doc.path,
          cell: cell.getId(),
          where: this.where
        }));
    });
  }

  /** This tab's documents connected to `kernel` (all of them when null). */
  private onKernel(kernel: string | null): IOpenDocument[] {
    return this.documents().filter(
      doc =>
        kernel === null || doc.kernel === undefined || doc.kernel() === kernel
    );
  }

  /** A read or an apply on one of this tab's documents. */
  local(request: Json): Json {
    const path = String(request.path ?? '');
    const doc = this.documents().find(d => d.token === request.doc);
    if (doc === undefined) {
      return {
        ok: false,
        code: 'closed',
        error: `'${path}' was closed in ${this.where} (or the page was reloaded); nothing changed. Call read_notebook again: it reads the notebook where it is now.`
      };
    }
    if (doc.path !== path) {
      return {
        ok: false,
        code: 'renamed',
        error: `'${path}' was renamed to '${doc.path}' in ${this.where}; nothing changed. Use the new path.`
      };
    }
    const guard = doc.guard();
    if (request.type === 'read') {
      const answer: Json = {
        ok: true,
        notebook: doc.toJSON() as unknown as Json,
        editing: guard.editing,
        busy: [...guard.busy],
        read_only: doc.readOnly
      };
      if (doc.dirty !== undefined) {
        answer.dirty = doc.dirty();
      }
      if (typeof request.running === 'string' && doc.selectedWhenRun) {
        answer.selected = doc.selectedWhenRun(request.running);
      }
      return answer;
    }
    if (request.type !== 'apply') {
      return {
        ok: false,
        error: `Unknown request ${JSON.stringify(request.type)}.`
      };
    }
    if (doc.readOnly) {
      return {
        ok: false,
        code: 'readonly',
        error: `'${path}' is read-only in ${this.where} (it cannot be saved); nothing changed.`
      };
    }
    const protect = Array.isArray(request.protect)
      ? request.protect.map(String)
      : [];
    try {
      const ops = parseOps(request.ops);
      applyOps(doc.model, ops, {
        editing: guard.editing,
        busy: new Set([...guard.busy, ...protect])
      });
      for (const op of ops) {
        if (op.op === 'outputs' && op.id !== undefined) {
          doc.markRun?.(op.id);
        }
      }
    } catch (error) {
      if (error instanceof CellOpError) {
        return { ok: false, code: error.code, error: error.message };
      }
      throw error;
    }
    return { ok: true };
  }

  private async relay(request: Json): Promise<Json> {
    const app = String(request.app ?? '');
    if (!this.peers.has(app)) {
      return {
        ok: false,
        code: 'closed',
        error: `The browser tab that had '${String(request.path ?? '')}' open is gone (closed or reloaded); nothing changed. Call read_notebook again.`
      };
    }
    const answers = await this.askPeers(request, app);
    return (
      answers[0] ?? {
        ok: false,
        error: `The browser tab that has '${String(request.path ?? '')}' open did not answer; whether the change reached it is unknown. Call read_notebook to see the notebook as it is.`
      }
    );
  }

  /** Ask the other tabs (or one of them), and wait for their answers for a bounded time. */
  private askPeers(body: Json, to: string | null = null): Promise<Json[]> {
    const asked = to === null ? [...this.peers] : [to];
    if (this.port === null || asked.length === 0) {
      return Promise.resolve([]);
    }
    const id = `${this.app}:${++this.serial}`;
    const answers = new Map<string, Json>();
    return new Promise(resolve => {
      const finish = (): void => {
        clearTimeout(timer);
        this.waiting.delete(id);
        for (const peer of asked) {
          if (!answers.has(peer)) {
            this.peers.delete(peer); // gone without a word; it says hello again if it is not
          }
        }
        resolve([...answers.values()]);
      };
      const timer = setTimeout(finish, this.peerTimeout);
      this.waiting.set(id, answer => {
        answers.set(
          String(answer.from),
          isRecord(answer.body) ? answer.body : {}
        );
        if (asked.every(peer => answers.has(peer))) {
          finish();
        }
      });
      this.port?.post({ t: 'ask', id, from: this.app, to, body });
    });
  }

  private onPeer(message: Json): void {
    const from = typeof message.from === 'string' ? message.from : '';
    if (from === '' || from === this.app) {
      return;
    }
    if (message.t === 'hello') {
      this.peers.add(from);
      this.port?.post({ t: 'here', from: this.app, to: from });
    } else if (message.t === 'here' && message.to === this.app) {
      this.peers.add(from);
    } else if (message.t === 'bye') {
      this.peers.delete(from);
    } else if (
      message.t === 'ask' &&
      isRecord(message.body) &&
      (message.to === null || message.to === this.app)
    ) {
      this.peers.add(from);
      const body = message.body;
      // A tab answers for itself only: claims are never passed on twice.
      const answer =
        body.type === 'claim'
          ? { docs: this.claims(String(body.path ?? '')) }
          : body.type === 'locate'
            ? {
                docs: this.located(
                  String(body.cell ?? ''),
                  typeof body.kernel === 'string' ? body.kernel : null
                )
              }
            : body.type === 'running'
              ? {
                  docs: this.running(
                    String(body.source ?? ''),
                    typeof body.kernel === 'string' ? body.kernel : null
                  )
                }
              : this.answerLocal(body);
      this.port?.post({
        t: 'reply',
        id: message.id,
        from: this.app,
        to: from,
        body: answer
      });
    } else if (message.t === 'reply' && message.to === this.app) {
      this.waiting.get(String(message.id))?.(message);
    }
  }

  private answerLocal(body: Json): Json {
    try {
      return this.local(body);
    } catch (error) {
      return { ok: false, error: `The front end failed: ${String(error)}` };
    }
  }
}

/** What a kernel is told about this front end when its comm opens. */
export interface IClientInfo {
  app: string;
  where: string;
  root: string;
  /**
   * Who writes the cells' outputs: the kernel's messages through this page (`kernel`), or the server, which
   * runs cells itself (`server`: jupyter-server-documents appends every display update as a new output).
   */
  outputs: 'kernel' | 'server';
  /** The path of the notebook this kernel connection belongs to (the kernel checks the root with it). */
  session: () => string;
}

/**
 * One kernel's comm. Opens when created, when the kernel says hello, after a
 * restart, and again at once if the kernel dropped it (it had accepted it).
 */
export class KernelLink {
  private comm: Kernel.IComm | null = null;
  private accepted = false;
  private restarting = false;
  private disposed = false;
  private readonly onHello = (): void => this.open();
  private readonly onStatus = (
    _: Kernel.IKernelConnection,
    status: KernelMessage.Status
  ): void => {
    if (status === 'restarting' || status === 'autorestarting') {
      this.restarting = true;
      this.comm = null;
      this.accepted = false;
    } else if (status === 'idle' && this.restarting) {
      this.restarting = false;
      this.open();
    }
  };

  constructor(
    readonly kernel: Kernel.IKernelConnection,
    private readonly hub: DocumentHub,
    private readonly info: IClientInfo
  ) {
    kernel.registerCommTarget(TARGET, this.onHello);
    kernel.statusChanged.connect(this.onStatus);
    this.open();
  }

  get isOpen(): boolean {
    return this.comm !== null && !this.comm.isDisposed;
  }

  /** Open the comm unless it is open already. */
  open(): void {
    if (this.disposed || this.isOpen || this.kernel.isDisposed) {
      return;
    }
    let comm: Kernel.IComm;
    try {
      comm = this.kernel.createComm(TARGET);
    } catch {
      return;
    }
    this.comm = comm;
    this.accepted = false;
    comm.onMsg = msg => this.onMessage(comm, msg);
    comm.onClose = () => {
      if (this.comm !== comm) {
        return;
      }
      const wasAccepted = this.accepted;
      this.comm = null;
      this.accepted = false;
      if (wasAccepted && !this.disposed) {
        setTimeout(() => this.open(), 0); // dropped by a kernel that has the target: come back
      }
    };
    try {
      comm.open({
        type: 'client',
        protocol: PROTOCOL,
        app: this.info.app,
        where: this.info.where,
        root: this.info.root,
        outputs: this.info.outputs,
        session: this.info.session()
      });
    } catch {
      this.comm = null;
    }
  }

  private onMessage(comm: Kernel.IComm, msg: KernelMessage.ICommMsgMsg): void {
    const data = msg.content.data as Json;
    if (data.type === 'welcome') {
      this.accepted = true;
      return;
    }
    if (typeof data.req !== 'number') {
      return;
    }
    const req = data.req;
    void this.hub.handle(data, this.kernel.id).then(answer => {
      if (!comm.isDisposed) {
        comm.send({ ...answer, req } as JSONObject);
      }
    });
  }

  dispose(): void {
    if (this.disposed) {
      return;
    }
    this.disposed = true;
    if (!this.kernel.isDisposed) {
      this.kernel.removeCommTarget(TARGET, this.onHello);
      this.kernel.statusChanged.disconnect(this.onStatus);
    }
    const comm = this.comm;
    this.comm = null;
    if (comm !== null && !comm.isDisposed) {
      try {
        comm.close();
      } catch {
        // the kernel is gone already
      }
    }
  }
}
