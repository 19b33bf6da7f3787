import type Database from "better-sqlite3";
import { createChangeFeed, type StoreChange, type StoreChanges } from "../changes.js";

/**
 * What the SQLite store tells of changes: this process's own, announced as they commit; another
 * process's (several may share the file) only in the epoch, which moves with PRAGMA data_version (it
 * moves when another connection commits).
 */
export class SqliteChanges {
  readonly changes: StoreChanges;
  readonly #emit: (change: StoreChange) => void;
  readonly #dataVersion: Database.Statement;
  readonly #closed: () => boolean;
  #lastVersion: number;
  #epoch = 0;

  constructor(dataVersion: Database.Statement, closed: () => boolean) {
    this.#dataVersion = dataVersion;
    this.#closed = closed;
    this.#lastVersion = dataVersion.get() as number;
    const feed = createChangeFeed({ epoch: () => this.#currentEpoch(), hearsOthers: () => false });
    this.changes = feed.changes;
    this.#emit = feed.emit;
  }

  /** Once `written` committed, announces the change `change` makes of its result (nothing when it answers undefined). */
  after<T>(written: Promise<T>, change: StoreChange | ((result: T) => StoreChange | undefined)): Promise<T> {
    return written.then((result) => {
      const announced = typeof change === "function" ? change(result) : change;
      if (announced !== undefined) this.#emit(announced);
      return result;
    });
  }

  #currentEpoch(): number | undefined {
    if (this.#closed()) return undefined;
    const version = this.#dataVersion.get() as number;
    if (version !== this.#lastVersion) {
      this.#lastVersion = version;
      this.#epoch += 1;
    }
    return this.#epoch;
  }
}
