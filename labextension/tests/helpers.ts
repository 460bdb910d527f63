/** Loads the transcripts that `scripts/make_fixtures.py` wrote from real scripted runs. */

import * as fs from 'fs';
import * as path from 'path';

import { IRunPayload, parsePayload } from '../src/types';

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
