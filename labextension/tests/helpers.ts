/**
 * Loads the transcripts that `scripts/make_fixtures.py` wrote from real scripted runs, and what the
 * review and undo specs share: a runner that answers on demand, and finders for the rendered run.
 */

import * as fs from 'fs';
import * as path from 'path';

import type { IFileChange, IRunFinished } from '../src/types';
import { IRunPayload, parsePayload } from '../src/types';
import type { IUndoResult, IUndoRunner, UndoAction } from '../src/undo';

export const FIXTURES = path.join(__dirname, 'fixtures');

export type FixtureName =
  | 'every_tool_session'
  | 'denied_and_blocked'
  | 'dry_run'
  | 'failure'
  | 'long_diff'
  | 'follow_up'
  | 'fork'
  | 'kernel'
  | 'kernel_undo'
  | 'review'
  | 'thinking';

export function rawFixture(name: FixtureName): unknown {
  const file = path.join(FIXTURES, `${name}.json`);
  if (!fs.existsSync(file)) {
    throw new Error(
      `${file} is missing: run \`make labextension-fixtures\` (or .venv/bin/python labextension/scripts/make_fixtures.py) first.`
    );
  }
  return JSON.parse(fs.readFileSync(file, 'utf-8')) as unknown;
}

export function fixture(name: FixtureName): IRunPayload {
  return parsePayload(rawFixture(name));
}

/** Text of every element matching `selector` under `root`. */
export function texts(root: ParentNode, selector: string): string[] {
  return Array.from(root.querySelectorAll(selector)).map(
    node => node.textContent ?? ''
  );
}

/** The fixture's `run_finished` event. */
export function finishedOf(payload: IRunPayload): IRunFinished {
  const last = payload.events[payload.events.length - 1];
  if (last.kind !== 'run_finished') {
    throw new Error('the fixture did not finish');
  }
  return last;
}

/** The fixture with its review list replaced. */
export function withChanges(
  payload: IRunPayload,
  changes: IFileChange[],
  filesChanged = changes.map(c => c.path)
): IRunPayload {
  const finished = {
    ...finishedOf(payload),
    changes,
    files_changed: filesChanged
  };
  return { ...payload, events: [...payload.events.slice(0, -1), finished] };
}

/** A runner whose answers the test hands out one at a time, in order. */
export class FakeRunner implements IUndoRunner {
  actions: UndoAction[] = [];
  inNotebook = true;
  private resolvers: Array<(result: IUndoResult) => void> = [];

  canRun(): boolean {
    return this.inNotebook;
  }

  run(action: UndoAction): Promise<IUndoResult> {
    this.actions.push(action);
    return new Promise(resolve => this.resolvers.push(resolve));
  }

  async answer(result: IUndoResult): Promise<void> {
    // Let a Revert all reach its next request before answering it.
    await settle();
    const resolve = this.resolvers.shift();
    if (resolve === undefined) {
      throw new Error('no action is waiting for an answer');
    }
    resolve(result);
    await settle();
  }
}

export function settle(): Promise<void> {
  return new Promise(done => setTimeout(done, 0));
}

/** The review row of `path`. */
export function row(host: HTMLElement, path: string): HTMLElement {
  const found = Array.from(
    host.querySelectorAll<HTMLElement>('.anb-review-row')
  ).find(node => node.dataset.path === path);
  if (found === undefined) {
    throw new Error(`no review row for ${path}`);
  }
  return found;
}

/** The button labelled `label` under `node`. */
export function buttonIn(node: ParentNode, label: string): HTMLButtonElement {
  const found = Array.from(node.querySelectorAll('button')).find(
    button => button.textContent === label
  );
  if (found === undefined) {
    throw new Error(`no button "${label}"`);
  }
  return found;
}

/** The card of step `n`. */
export function step(host: HTMLElement, n: number): HTMLElement {
  const found = host.querySelector<HTMLElement>(
    `details.anb-step[data-step="${n}"]`
  );
  if (found === null) {
    throw new Error(`no step ${n}`);
  }
  return found;
}
