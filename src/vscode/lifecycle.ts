/**
 * One disposable base: an object registers its children and disposes them in
 * reverse order; registering on an already disposed parent disposes the child
 * at once.
 */
export interface Disposable {
  dispose(): unknown;
}

export class DisposableStore implements Disposable {
  private readonly items: Disposable[] = [];
  private disposed = false;

  add<T extends Disposable>(item: T): T {
    if (this.disposed) void item.dispose();
    else this.items.push(item);
    return item;
  }

  get isDisposed(): boolean {
    return this.disposed;
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    for (const item of this.items.reverse()) await item.dispose();
    this.items.length = 0;
  }
}
