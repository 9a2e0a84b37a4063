import { parseArgs } from 'node:util'
import { compareServers, formatReport } from './run.js'

export const USAGE = `usage: npm run compat -- [options] <reference-url> <candidate-url>

Calls every /v1 route on both servers (parameters read from the reference server's chain
state), compares statuses and bodies (keys sorted), prints a diff per route that differs,
and exits 1 if any does (0 when all are equal, 2 on a usage error). edge-api's deliberate
differences from the newest Go (docs/clients.md) are listed as known differences, not counted.

options:
  --request-id <hex>          also compare /v1/bls/signatures/<hex>
  --exemption-id <id>         with --exemption-account, also compare
  --exemption-account <addr>    /v1/restrictions/exemptions/<id>/usage/<addr>
  --pubkey <hex>              also compare /v1/debug/pubkey-to-addr/<hex>
  --skip <path>               leave a route out (repeatable), e.g. --skip /v1/debug/verify/1843185
  --retries <n>               refetch both this many times when bodies differ (default 3)
  --retry-delay-ms <ms>       pause before a refetch (default 1000)
  --timeout-ms <ms>           per-request timeout (default 30000)
`

/** Runs the tool; returns the exit code. `write` receives everything it prints. */
export async function main (args: readonly string[], write: (text: string) => void): Promise<number> {
  let parsed
  try {
    parsed = parseArgs({
      args: [...args],
      allowPositionals: true,
      options: {
        'request-id': { type: 'string' },
        'exemption-id': { type: 'string' },
        'exemption-account': { type: 'string' },
        pubkey: { type: 'string' },
        skip: { type: 'string', multiple: true },
        retries: { type: 'string' },
        'retry-delay-ms': { type: 'string' },
        'timeout-ms': { type: 'string' },
        help: { type: 'boolean' }
      }
    })
  } catch (err) {
    write(`${(err as Error).message}\n${USAGE}`)
    return 2
  }
  const { values, positionals } = parsed
  if (values.help === true) {
    write(USAGE)
    return 0
  }
  const [first, second] = positionals
  const numbers = [values.retries, values['retry-delay-ms'], values['timeout-ms']]
  if (positionals.length !== 2 || !isHttpUrl(first) || !isHttpUrl(second) || numbers.some((n) => n !== undefined && !/^\d+$/.test(n))) {
    write(`two http(s) base URLs and whole-number options are needed\n${USAGE}`)
    return 2
  }
  const report = await compareServers(first as string, second as string, {
    requestId: values['request-id'],
    exemptionId: values['exemption-id'],
    exemptionAccount: values['exemption-account'],
    pubkey: values.pubkey,
    skip: values.skip ?? [],
    ...(values.retries !== undefined ? { retries: Number(values.retries) } : {}),
    ...(values['retry-delay-ms'] !== undefined ? { retryDelayMs: Number(values['retry-delay-ms']) } : {}),
    ...(values['timeout-ms'] !== undefined ? { timeoutMs: Number(values['timeout-ms']) } : {})
  })
  write(formatReport(report, first as string, second as string))
  return report.mismatches === 0 ? 0 : 1
}

function isHttpUrl (text: string | undefined): boolean {
  return text !== undefined && URL.canParse(text) && /^https?:$/.test(new URL(text).protocol)
}
