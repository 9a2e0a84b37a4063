import { AsyncLocalStorage } from 'node:async_hooks'

// Which client a piece of work is for, from the HTTP request that started it down to the
// queues it waits in (the chain reads' limit, the optional routes' pool), through every await
// and coalesced read in between. An explicit argument would have to cross every reader of the
// chain client (pinning, min-height, the answer cache, each route), and a read started after
// an await inside them would lose it; the store follows the request by construction.

const store = new AsyncLocalStorage<string>()

/** The client of work started without one (background polls, probes, tests): one client of its own. */
export const NO_CLIENT = ''

/** Runs `work` (and everything it starts) as `client`'s. */
export function runAsClient<T> (client: string, work: () => T): T {
  return store.run(client, work)
}

/** The client the running work is for. */
export function currentClient (): string {
  return store.getStore() ?? NO_CLIENT
}
