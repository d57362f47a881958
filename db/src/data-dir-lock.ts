/**
 * One process per embedded (PGlite) data directory: PGlite has no locking of its own, and two processes writing the
 * same files corrupt them. `lockDataDir` creates `<dir>/service.lock` holding this process's pid (created atomically);
 * a second process finds it, sees that pid alive and refuses at once. A lock whose pid is no longer running (a crash,
 * a SIGKILL) is stale: it is replaced.
 */
import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** Thrown when another running process holds the data directory. */
export class DataDirLockedError extends Error {
  readonly code = 'DATA_DIR_LOCKED';
  constructor(
    readonly dataDir: string,
    readonly pid: number,
    readonly lockFile: string,
  ) {
    super(
      `DATA_DIR ${dataDir} is in use by process ${pid} (lock file ${lockFile}): the embedded database serves one process. ` +
        'Stop that process first, give this one another DATA_DIR, or set DATABASE_URL to a PostgreSQL server to run several processes.',
    );
    this.name = 'DataDirLockedError';
  }
}

/** True when a process with this pid runs (EPERM: it runs, as another user). */
function running(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes the lock of `dataDir` (creating the directory) or throws `DataDirLockedError`; returns its release. */
export function lockDataDir(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const lockFile = join(dataDir, 'service.lock');
  for (let attempt = 0; ; attempt += 1) {
    try {
      const fd = openSync(lockFile, 'wx');
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 2) throw error;
      let pid = NaN;
      try {
        pid = Number.parseInt(readFileSync(lockFile, 'utf8'), 10);
      } catch {
        continue; // removed meanwhile: try again
      }
      if (running(pid)) throw new DataDirLockedError(dataDir, pid, lockFile);
      try {
        unlinkSync(lockFile); // stale: its process is gone
      } catch {
        // another starter removed it first
      }
    }
  }
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    process.removeListener('exit', release);
    try {
      if (Number.parseInt(readFileSync(lockFile, 'utf8'), 10) === process.pid) unlinkSync(lockFile);
    } catch {
      // already gone
    }
  };
  // process.exit() without close (a failed start, the shutdown timer) still removes it.
  process.on('exit', release);
  return release;
}
