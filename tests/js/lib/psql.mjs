// SQL from the tests, through Debian's psql: what a team's own scripts and
// migrations would run against the database Herald shares.
import { execFileSync, spawn } from 'node:child_process';

/** psqlArgs runs statements as one transaction that stops at the first error. */
function psqlArgs(dsn, statements) {
  return [dsn, '-q', '-v', 'ON_ERROR_STOP=1', '-1', '-c', statements];
}

/** sql runs statements on dsn as one transaction and returns what psql printed. */
export function sql(dsn, statements) {
  return execFileSync('psql', psqlArgs(dsn, statements), { stdio: 'pipe', timeout: 60_000 }).toString();
}

/** sqlAsync is sql without blocking the event loop (for concurrent writers). */
export function sqlAsync(dsn, statements) {
  return new Promise((resolve, reject) => {
    const p = spawn('psql', psqlArgs(dsn, statements), { stdio: 'pipe' });
    let err = '';
    p.stderr.on('data', (d) => (err += d));
    p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`psql exited ${code}: ${err}`))));
  });
}

/**
 * dropSchema removes a test's schema, logging rather than failing when it
 * cannot: the tests are over, and a schema left behind harms none.
 */
export function dropSchema(dsn, schema) {
  try {
    sql(dsn, `DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } catch (err) {
    console.error(`could not drop schema ${schema}: ${err.message}`);
  }
}
