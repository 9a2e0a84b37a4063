import { fork, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'

/** A command a parent sends to a bench child over the IPC channel, and its answer. */
interface Request { readonly id: number, readonly cmd: string, readonly args: unknown }
interface Answer { readonly id: number, readonly ok: boolean, readonly result?: unknown, readonly error?: string }

export type Handlers = Record<string, (args: never) => unknown>

/**
 * In a child: tells the parent it is ready (with whatever it wants to report, e.g. its port)
 * and answers the parent's commands. The IPC channel keeps the child alive until the parent
 * disconnects or kills it, so every child ends with its parent.
 */
export function serveCommands (ready: unknown, handlers: Handlers): void {
  process.on('message', (message: Request) => {
    const handler = handlers[message.cmd]
    Promise.resolve()
      .then(() => {
        if (handler === undefined) throw new Error(`unknown command ${message.cmd}`)
        return handler(message.args as never)
      })
      .then((result) => process.send?.({ id: message.id, ok: true, result } satisfies Answer))
      .catch((err: Error) => process.send?.({ id: message.id, ok: false, error: err.stack ?? String(err) } satisfies Answer))
  })
  process.on('disconnect', () => process.exit(0))
  process.send?.({ ready })
}

/** A bench child process (run with tsx) driven over IPC. */
export class Child<Ready = unknown> {
  readonly process: ChildProcess
  readonly ready: Ready
  #next = 0
  readonly #waiting = new Map<number, { resolve: (v: unknown) => void, reject: (e: Error) => void }>()

  private constructor (child: ChildProcess, ready: Ready) {
    this.process = child
    this.ready = ready
    child.on('message', (message: Answer) => {
      const waiter = this.#waiting.get(message.id)
      if (waiter === undefined) return
      this.#waiting.delete(message.id)
      if (message.ok) waiter.resolve(message.result)
      else waiter.reject(new Error(message.error))
    })
    child.once('exit', (code, signal) => {
      for (const waiter of this.#waiting.values()) waiter.reject(new Error(`bench child exited (${code ?? signal})`))
      this.#waiting.clear()
    })
  }

  /** Forks `bench/children/<name>.ts` under tsx and waits for its ready message. */
  static async start<R> (name: string, args: readonly string[] = [], env: NodeJS.ProcessEnv = {}, stdout: 'ignore' | number = 'ignore'): Promise<Child<R>> {
    const file = fileURLToPath(new URL(`../children/${name}.ts`, import.meta.url))
    const child = fork(file, args, {
      execArgv: ['--import', 'tsx'],
      env: { ...process.env, ...env },
      // stdout is not read (a pipe nobody drains would block a child that logs): /dev/null or a file.
      stdio: ['ignore', stdout, 'inherit', 'ipc']
    })
    const [message] = await Promise.race([
      once(child, 'message') as Promise<[{ ready: R }]>,
      once(child, 'exit').then(([code]) => { throw new Error(`bench child ${name} exited with ${String(code)} before it was ready`) })
    ])
    return new Child<R>(child, message.ready)
  }

  call<T = unknown> (cmd: string, args: unknown = {}): Promise<T> {
    const id = ++this.#next
    return new Promise<T>((resolve, reject) => {
      this.#waiting.set(id, { resolve: resolve as (v: unknown) => void, reject })
      this.process.send({ id, cmd, args } satisfies Request)
    })
  }

  get pid (): number {
    return this.process.pid as number
  }

  async stop (): Promise<void> {
    if (this.process.exitCode !== null || this.process.signalCode !== null) return
    const exited = once(this.process, 'exit')
    this.process.kill('SIGKILL')
    await exited
  }
}
