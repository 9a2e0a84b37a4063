// A collector stand-in for bench/otlp-export-cost.ts, in a process of its own: it reads each
// export whole and answers 200 at once; it tells its parent its port.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

const server = createServer((req, res) => {
  req.resume()
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end())
})
server.listen(0, '127.0.0.1', () => process.send?.((server.address() as AddressInfo).port))
