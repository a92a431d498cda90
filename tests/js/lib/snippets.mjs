// Reads the fenced code blocks of a Markdown file, so that tests run the
// README's snippets exactly as a reader would paste them.
import { readFileSync } from 'node:fs';

/**
 * codeBlocks returns every fenced block of the Markdown file at path as
 * { lang, code, marker }: marker is NAME when the block is preceded by the
 * line `<!-- snippet: NAME -->` (blank lines between are allowed), else ''.
 */
export function codeBlocks(path) {
  const lines = readFileSync(path, 'utf8').split('\n');
  const blocks = [];
  let marker = '';
  for (let i = 0; i < lines.length; i++) {
    const m = /^<!--\s*snippet:\s*(\S+)\s*-->\s*$/.exec(lines[i]);
    if (m) {
      marker = m[1];
      continue;
    }
    const open = /^```(\S*)\s*$/.exec(lines[i]);
    if (!open) {
      if (lines[i].trim() !== '') marker = '';
      continue;
    }
    const body = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]); i++) {
      body.push(lines[i]);
    }
    if (i >= lines.length) {
      throw new Error(`${path}: a code block opened with ${open[0]} is never closed`);
    }
    blocks.push({ lang: open[1], code: body.join('\n') + '\n', marker });
    marker = '';
  }
  return blocks;
}

/** snippet returns the code of the one block marked name, or throws. */
export function snippet(blocks, name) {
  const found = blocks.filter((b) => b.marker === name);
  if (found.length !== 1) {
    throw new Error(`want one block marked <!-- snippet: ${name} -->, found ${found.length}`);
  }
  return found[0].code;
}

/**
 * substitute replaces each placeholder (a key of replacements) in code by
 * its value, and throws if one is missing: a snippet whose placeholders
 * changed must fail the test, not run against the wrong server.
 */
export function substitute(code, replacements) {
  let out = code;
  for (const [placeholder, value] of Object.entries(replacements)) {
    if (!out.includes(placeholder)) {
      throw new Error(`the snippet has no ${JSON.stringify(placeholder)} to replace:\n${code}`);
    }
    out = out.split(placeholder).join(value);
  }
  return out;
}
