// The machine-wide PostgreSQL test lock, as the Go tests take it
// (internal/test/testenv.LockPostgres): an exclusive flock(2) on
// herald-test-postgres.lock in the temporary directory.
//
// Some Go tests restart the test PostgreSQL server or terminate its
// backends, and scripts/test.sh can run them while the node tests run
// (HERALD_TEST_LANE=1), so a node test file that starts herald on PostgreSQL holds the lock from
// before its first node starts until its schema is dropped. Node has no
// flock of its own: util-linux's flock(1) takes the lock and holds it
// while its command (cat) reads the pipe from this process, so the lock
// goes when release() closes the pipe or when this process dies.
import { spawn } from 'node:child_process';
import { closeSync, ftruncateSync, openSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** POSTGRES_LOCK_FILE is the file the Go tests lock (testenv.PostgresLockFile). */
export const POSTGRES_LOCK_FILE = path.join(os.tmpdir(), 'herald-test-postgres.lock');

/** The longest a file waits for the lock; a Go test holds it for one test. */
const WAIT_SECONDS = 300;

/**
 * lockPostgres resolves once this process holds the lock, with release().
 * holder names the test in the lock file, where a waiting Go test reads it.
 */
export async function lockPostgres(holder) {
  const child = spawn(
    'flock',
    ['--exclusive', '--timeout', String(WAIT_SECONDS), POSTGRES_LOCK_FILE, 'sh', '-c', 'echo locked && exec cat'],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('locked\n')) resolve();
    });
    child.on('error', (err) =>
      reject(new Error(`PostgreSQL test lock: cannot run flock (util-linux): ${err.message}`)),
    );
    child.on('exit', (code) =>
      reject(
        new Error(
          `PostgreSQL test lock ${POSTGRES_LOCK_FILE}: flock exited with ${code} ` +
            `(1: still held after ${WAIT_SECONDS} s by the holder the file names) ${stderr.trim()}`,
        ),
      ),
    );
  });
  // Nothing left running keeps this process alive: a file that ends
  // without release() still lets go of the lock as it exits.
  child.unref();
  for (const s of [child.stdin, child.stdout, child.stderr]) s.unref?.();
  // Only the holder writes, so the file names the current holder: the
  // Go tests' format, "pid<TAB>test".
  writeHolder(`${process.pid}\t${holder}\n`);
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      writeHolder('');
      child.stdin.end();
    },
  };
}

function writeHolder(text) {
  try {
    const fd = openSync(POSTGRES_LOCK_FILE, 'r+');
    try {
      ftruncateSync(fd, 0);
      if (text) writeSync(fd, text, 0);
    } finally {
      closeSync(fd);
    }
  } catch {
    // The name is for a waiter's log line only.
  }
}
