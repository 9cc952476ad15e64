/**
 * One embedding pool for several backlogs (a workspace, docs/workspace.md): the model is loaded once,
 * each backlog's SemanticSearch acquires it and releases it when it closes (the last release closes the
 * pool). A backlog that builds many chunks may grow the pool; it shrinks only when no backlog still
 * building wants more workers than one.
 */
import { EmbeddingPool, type PoolOptions } from './pool.js';
import type { ResolvedEmbedder } from './types.js';

export class SharedEmbeddingPool {
  private started: Promise<ResolvedEmbedder<EmbeddingPool>> | undefined;
  private users = 0;
  private readonly wanted = new Map<object, number>();
  private readonly laneOwners = new Set<object>();
  /** How many times a pool was started (one while any backlog holds it). */
  starts = 0;
  /** What loading the model cost (MB of RSS), for each backlog's memory plan: only the first pays it. */
  loadMb = 0;

  constructor(private readonly options: PoolOptions) {}

  acquire(): Promise<ResolvedEmbedder<EmbeddingPool>> {
    this.users++;
    if (!this.started) {
      this.starts++;
      const before = process.memoryUsage.rss();
      this.started = EmbeddingPool.start({ ...this.options, workers: 1 }).then((started) => {
        this.loadMb = Math.max(0, process.memoryUsage.rss() - before) / 2 ** 20;
        return started;
      });
    }
    return this.started;
  }

  async release(owner: object): Promise<void> {
    this.wanted.delete(owner);
    const laned = this.laneOwners.delete(owner);
    if (--this.users > 0 && laned) await this.queryLane(owner, false);
    if (this.users > 0 || !this.started) return;
    const started = this.started;
    this.started = undefined;
    await (await started).embedder?.close();
  }

  /** `owner`'s build wants the pool's query lane (EmbeddingPool.queryLane) open; it stays while any owner does. */
  async queryLane(owner: object, open: boolean): Promise<void> {
    if (open) this.laneOwners.add(owner);
    else this.laneOwners.delete(owner);
    const pool = (await this.started)?.embedder;
    await pool?.queryLane(this.laneOwners.size > 0);
  }

  /** `owner` wants `workers` (1 when its build is done); the pool runs the most any owner wants. */
  async resize(owner: object, workers: number): Promise<void> {
    if (workers > 1) this.wanted.set(owner, workers);
    else this.wanted.delete(owner);
    const pool = (await this.started)?.embedder;
    await pool?.resize(Math.max(1, ...this.wanted.values()));
  }
}
