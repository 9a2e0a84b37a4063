#!/bin/sh
# Renders haproxy.cfg.template (next to this script) into an HAProxy configuration on stdout.
# Used by the router container at start (entrypoint.sh) and by the test suite, so the
# policy that is tested is the policy that is deployed. POSIX sh + sed + awk only: it runs
# in the official haproxy images (busybox or dash) and on the CI host alike.
#
# Settings (environment):
#   EDGE_API_ROUTER_SERVERS        empty: find replicas through DNS (Compose). Otherwise a
#                                  space-separated list of host:port, one server each (tests).
#   EDGE_API_POOL_HOST             edge-api-pool   DNS name resolving to every replica
#   EDGE_API_PORT                  18080           replicas' port (DNS mode)
#   EDGE_API_ROUTER_POOL_SLOTS     64              server-template slots (DNS mode)
#   EDGE_API_ROUTER_DNS_RESOLVER   127.0.0.11:53   Docker's embedded DNS (DNS mode)
#   EDGE_API_ROUTER_ADDRESS        (all)           listen address
#   EDGE_API_ROUTER_PORT           18080           listen port
#   EDGE_API_ROUTER_METRICS_ADDRESS 127.0.0.1:8405 Prometheus /metrics listener
#   EDGE_API_ROUTER_STATS_SOCKET   (none)          runtime API socket path (level operator)
#   EDGE_API_ROUTER_MAX_CONNECTIONS 4096           frontend maxconn
#   EDGE_API_ROUTER_CONNECT_TIMEOUT_SECONDS 30     timeout connect / http-request
#   EDGE_API_ROUTER_READ_TIMEOUT_SECONDS 120       timeout client / server
#   EDGE_API_ROUTER_SERVER_MAXCONN 64              requests a replica is given at once; the rest
#                                                  wait in the router's queue (0: no limit and
#                                                  no queue, the template before issue 23)
#   EDGE_API_ROUTER_QUEUE_TIMEOUT_MS 100           longest wait in that queue; then the router
#                                                  answers 503 itself
#   EDGE_API_ROUTER_QUEUE_LENGTH   32              most requests waiting in that queue at once; the
#                                                  next is answered 503 at once, as a replica
#                                                  sheds (0: bounded by timeout queue alone)
#                                  (all three from measurements: docs/router-queue.md)
#   EDGE_API_ROUTER_WAITING_MAXCONN 1024         held long-polls and event streams a replica is
#                                                  given at once (the waiting lane); the rest wait
#                                                  in that lane's queue, bounded as the pool's
#   EDGE_API_ROUTER_INIT_STATE     auto            auto: `init-state fully-down` when the
#                                                  HAProxy binary is 3.1 or newer (older ones
#                                                  reject the keyword); on | off to force it
#   HAPROXY_BIN                    haproxy         the binary asked for its version (auto)
#   EDGE_API_ROUTER_CLIENT_MAX_CONNECTIONS 100     connections one client may hold open; the
#                                                  requests on those it opens beyond are
#                                                  answered 429, and beyond twice that its
#                                                  connections are closed as they open
#                                                  (0: no limit)
#   EDGE_API_ROUTER_CLIENT_MAX_REQUESTS 2000       requests one client may send in 10 s; beyond,
#                                                  429 with Retry-After 10 (0: no limit)
#   EDGE_API_EXPOSE_OPTIONAL_ROUTES false          true: pass the optional verify/debug routes
#                                                  on; false: answer them 403 (as edge-api does)
set -eu

fail () {
  echo "edge-api-router: $*" >&2
  exit 1
}

here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
template=${EDGE_API_ROUTER_TEMPLATE:-$here/haproxy.cfg.template}
[ -r "$template" ] || fail "template $template is not readable"

number () { # name value
  case $2 in
    ''|*[!0-9]*) fail "invalid numeric setting $1='$2' (digits only)" ;;
  esac
  [ "$2" -gt 0 ] || fail "invalid numeric setting $1='$2' (must be greater than 0)"
}
count () { # name value: 0 allowed
  case $2 in
    ''|*[!0-9]*) fail "invalid numeric setting $1='$2' (digits only)" ;;
  esac
}
port () { # name value
  number "$1" "$2"
  [ "$2" -le 65535 ] || fail "invalid port $1='$2' (1-65535)"
}
host () { # name value: a host name or IP literal; nothing that could break out of a config line
  case $2 in
    ''|*[!A-Za-z0-9.:_-]*) fail "invalid host $1='$2' (letters, digits, '.', ':', '_', '-')" ;;
  esac
}
host_port () { # name value
  case $2 in
    *:*) host "$1" "${2%:*}"; port "$1" "${2##*:}" ;;
    *) fail "invalid address $1='$2' (host:port)" ;;
  esac
}

servers=${EDGE_API_ROUTER_SERVERS:-}
pool_host=${EDGE_API_POOL_HOST:-edge-api-pool}
pool_port=${EDGE_API_PORT:-18080}
slots=${EDGE_API_ROUTER_POOL_SLOTS:-64}
resolver=${EDGE_API_ROUTER_DNS_RESOLVER:-127.0.0.11:53}
address=${EDGE_API_ROUTER_ADDRESS:-}
listen_port=${EDGE_API_ROUTER_PORT:-18080}
metrics=${EDGE_API_ROUTER_METRICS_ADDRESS:-127.0.0.1:8405}
socket=${EDGE_API_ROUTER_STATS_SOCKET:-}
max_connections=${EDGE_API_ROUTER_MAX_CONNECTIONS:-4096}
connect_timeout=${EDGE_API_ROUTER_CONNECT_TIMEOUT_SECONDS:-30}
read_timeout=${EDGE_API_ROUTER_READ_TIMEOUT_SECONDS:-120}
# Chosen from a measured replica (Little's law, docs/router-queue.md; BENCHMARKS.md, bench 11).
server_maxconn=${EDGE_API_ROUTER_SERVER_MAXCONN:-64}
queue_timeout=${EDGE_API_ROUTER_QUEUE_TIMEOUT_MS:-100}
queue_length=${EDGE_API_ROUTER_QUEUE_LENGTH:-32}
# A held request costs a replica ~7 KB and no work (docs/waiting.md): room for many, but bounded.
waiting_maxconn=${EDGE_API_ROUTER_WAITING_MAXCONN:-1024}
init_state=${EDGE_API_ROUTER_INIT_STATE:-auto}
expose_optional=${EDGE_API_EXPOSE_OPTIONAL_ROUTES:-false}
client_connections=${EDGE_API_ROUTER_CLIENT_MAX_CONNECTIONS:-100}
client_requests=${EDGE_API_ROUTER_CLIENT_MAX_REQUESTS:-2000}

port EDGE_API_ROUTER_PORT "$listen_port"
[ -z "$address" ] || host EDGE_API_ROUTER_ADDRESS "$address"
host_port EDGE_API_ROUTER_METRICS_ADDRESS "$metrics"
number EDGE_API_ROUTER_MAX_CONNECTIONS "$max_connections"
number EDGE_API_ROUTER_CONNECT_TIMEOUT_SECONDS "$connect_timeout"
number EDGE_API_ROUTER_READ_TIMEOUT_SECONDS "$read_timeout"
count EDGE_API_ROUTER_SERVER_MAXCONN "$server_maxconn"
number EDGE_API_ROUTER_QUEUE_TIMEOUT_MS "$queue_timeout"
count EDGE_API_ROUTER_QUEUE_LENGTH "$queue_length"
number EDGE_API_ROUTER_WAITING_MAXCONN "$waiting_maxconn"
count EDGE_API_ROUTER_CLIENT_MAX_CONNECTIONS "$client_connections"
count EDGE_API_ROUTER_CLIENT_MAX_REQUESTS "$client_requests"
case $socket in
  *[!A-Za-z0-9./_-]*) fail "invalid path EDGE_API_ROUTER_STATS_SOCKET='$socket'" ;;
esac

case $expose_optional in
  true) optional_block='  # optional routes exposed (EDGE_API_EXPOSE_OPTIONAL_ROUTES=true)' ;;
  false) optional_block="  acl optional_route path,url_dec -m reg -i ^/v1/(verify-proof|verify-block|debug)(/|\$)
  http-request return status 403 content-type application/json string '{\"message\":\"this optional route is not exposed (EDGE_API_EXPOSE_OPTIONAL_ROUTES=false)\"}' if optional_route" ;;
  *) fail "invalid EDGE_API_EXPOSE_OPTIONAL_ROUTES='$expose_optional' (true or false)" ;;
esac

case $init_state in
  on) init_state=' init-state fully-down' ;;
  off) init_state='' ;;
  auto)
    # "HAProxy version 3.2.4-98813a1 2025/08/13 ..." -> 3 2
    version=$("${HAPROXY_BIN:-haproxy}" -v 2>/dev/null | sed -n 's/^HAProxy version \([0-9][0-9]*\)\.\([0-9][0-9]*\).*/\1 \2/p' | head -n 1)
    [ -n "$version" ] || fail "cannot read the version of ${HAPROXY_BIN:-haproxy}; set EDGE_API_ROUTER_INIT_STATE=on|off"
    set -- $version
    if [ "$1" -gt 3 ] || { [ "$1" -eq 3 ] && [ "$2" -ge 1 ]; }; then init_state=' init-state fully-down'; else init_state=''; fi
    ;;
  *) fail "invalid EDGE_API_ROUTER_INIT_STATE='$init_state' (auto, on or off)" ;;
esac

# Every refusal below (status, Retry-After, tarpit or not, body) is a copy of its entry in the
# one catalogue of refusals, src/admission/refusals.ts; test/admission/refusals.test.ts renders
# them all and fails, naming the refusal, until each copy agrees with it.
# The same 503 a replica sheds with (src/admission/shedding.ts): clients see one shape of refusal.
# A deny, not a return, so HAProxy counts it as the backend's denied request (dreq) and logs
# it PR--, apart from the sQ-- of a request that waited out timeout queue.
if [ "$queue_length" -gt 0 ]; then
  queue_length_rule="  http-request deny deny_status 503 content-type 'application/json; charset=utf-8' hdr Retry-After 1 string '{\"message\":\"Service Unavailable\"}' if { queue(edge_api_pool) ge $queue_length }"
else
  queue_length_rule='  # no queue length bound (EDGE_API_ROUTER_QUEUE_LENGTH=0): timeout queue alone bounds the wait'
fi

# The waiting lane's bound: its slots (maxconn) and its queue, refused past its length as a
# replica refuses a wait over its cap (src/waiting/wait-quota.ts): one shape of "too many waiting".
waiting_limits="  default-server maxconn $waiting_maxconn"
# A stream refused so is answered as a replica ends one (src/waiting/event-stream.ts): 200
# text/event-stream with retry: and nothing else, so an EventSource comes back after it (on a
# 429 it would stop for good).
[ "$queue_length" -eq 0 ] || waiting_limits="$waiting_limits
  http-request return status 200 content-type text/event-stream hdr Cache-Control no-cache string \"retry: 5000\\n\\n\" if { path /v1/events } { queue(edge_api_waiting) ge $queue_length }
  http-request deny deny_status 429 content-type 'application/json; charset=utf-8' hdr Retry-After 5 string '{\"message\":\"too many requests waiting for the chain (long-polls and event streams together: the service is at its limit); retry later\"}' if { queue(edge_api_waiting) ge $queue_length }"

# One table entry per client (~100 bytes; 100k clients ~10 MB), forgotten a minute after its
# last request. IPv6 clients by /64, as the replicas count them (src/admission/client-identity.ts).
# Refusals are tarpitted: held `timeout tarpit` (1 s) before the 429 goes, as the replicas hold
# theirs, so a closed loop that ignores Retry-After gets one refusal per connection a second
# (answered at once, a 1,024-connection scraper was refused 12,000 times a second, and the
# router's CPU and the loopback were the polite clients' latency).
client_refusal="http-request tarpit deny_status 429 content-type 'application/json; charset=utf-8' hdr Retry-After 10 string '{\"message\":\"Too Many Requests\"}'"
# A stream refused so is answered as a replica ends one (src/waiting/event-stream.ts), tarpitted
# the same: 200 text/event-stream with retry: (the 429's Retry-After) and nothing else, so an
# EventSource comes back then (on a 429 it would stop for good).
stream_refusal="http-request tarpit deny_status 200 content-type text/event-stream hdr Cache-Control no-cache string \"retry: 10000\\n\\n\""
client_limits="  stick-table type ipv6 size 100k expire 60s store conn_cur,http_req_rate(10s)
  tcp-request connection track-sc0 src,ipmask(32,64)"
if [ "$client_connections" -gt 0 ]; then
  # A connection a client opens while it holds its limit already is its excess: each request on
  # it is refused, for the connection's life, while its first connections are served (as
  # nginx's limit_conn, the Go front's 100 per address). Past twice the limit a connection is
  # closed as it opens: the held 429s of one client never fill the router's own slots
  # (maxconn), which everyone's connections share.
  client_limits="$client_limits
  tcp-request connection reject if { sc_conn_cur(0) gt $(( client_connections * 2 )) }
  tcp-request connection set-var(sess.excess_connection) bool(true) if { sc_conn_cur(0) gt $client_connections }
  $stream_refusal if { path /v1/events } { var(sess.excess_connection) -m found }
  $client_refusal if { var(sess.excess_connection) -m found }"
fi
if [ "$client_requests" -gt 0 ]; then
  client_limits="$client_limits
  $stream_refusal if { path /v1/events } { sc_http_req_rate(0) gt $client_requests }
  $client_refusal if { sc_http_req_rate(0) gt $client_requests }"
fi
if [ "$client_connections" -eq 0 ] && [ "$client_requests" -eq 0 ]; then
  client_limits="$client_limits
  # no per-client limits (EDGE_API_ROUTER_CLIENT_MAX_CONNECTIONS=0, EDGE_API_ROUTER_CLIENT_MAX_REQUESTS=0)"
fi

# Fair share at the router, with no setting of its own (docs/overload.md): a client holding more
# than a quarter of a replica's slots (EDGE_API_ROUTER_SERVER_MAXCONN / 4) open, and more than 8
# (the replicas' floor, src/admission/fair-share.ts), is far over its share. Its requests wait behind
# everyone else's in the queue, and while fewer slots than that are free across the pool (nearly
# saturated) it is refused with the replicas' 429's shape: it never fills the slots and the
# queue, and leaves the others room instead of the queue's 503.
# Off with the per-client limits (both 0: the router cannot tell clients apart, e.g. behind a CDN).
heavy_connections=$(( server_maxconn / 4 > 8 ? server_maxconn / 4 : 8 ))
fair_share_rules="  # no fair share at the router (EDGE_API_ROUTER_CLIENT_MAX_CONNECTIONS=0, EDGE_API_ROUTER_CLIENT_MAX_REQUESTS=0)"
[ "$client_connections" -eq 0 ] && [ "$client_requests" -eq 0 ] || fair_share_rules="  http-request set-priority-class int(1) if { sc_conn_cur(0) gt $heavy_connections }
  http-request tarpit deny_status 429 content-type 'application/json; charset=utf-8' hdr Retry-After 1 string '{\"message\":\"too many requests from this client while the service is busy; retry after the time in Retry-After\"}' if { be_conn_free(edge_api_pool) lt $heavy_connections } { sc_conn_cur(0) gt $heavy_connections }"

nl='
'
if [ -z "$servers" ]; then
  host EDGE_API_POOL_HOST "$pool_host"
  port EDGE_API_PORT "$pool_port"
  number EDGE_API_ROUTER_POOL_SLOTS "$slots"
  host_port EDGE_API_ROUTER_DNS_RESOLVER "$resolver"
  # init-addr none: an empty pool at start is not an error; replicas appear as DNS finds them.
  server_block="  server-template edgeapi $slots $pool_host:$pool_port resolvers docker init-addr none$init_state"
  resolvers_block="resolvers docker
  nameserver dns $resolver
  accepted_payload_size 8192
  resolve_retries 3
  timeout resolve 1s
  timeout retry 1s
  hold valid 5s
  hold other 5s
  hold refused 5s
  hold nx 5s
  hold timeout 5s
  hold obsolete 5s

"
else
  server_block=''
  n=0
  for server in $servers; do
    host_port EDGE_API_ROUTER_SERVERS "$server"
    n=$((n + 1))
    server_block="$server_block${server_block:+$nl}  server edgeapi$n $server$init_state"
  done
  resolvers_block=''
fi

if [ -n "$socket" ]; then
  socket_line="  stats socket $socket mode 600 level operator"
else
  socket_line='  # no runtime API socket (EDGE_API_ROUTER_STATS_SOCKET is unset)'
fi
bind="${address:-}:$listen_port"

# Every value was validated above: none holds '|', '&', '\' or a newline, so sed is safe.
sed \
  -e "s|@MAX_CONNECTIONS@|$max_connections|g" \
  -e "s|@CONNECT_TIMEOUT@|$connect_timeout|g" \
  -e "s|@READ_TIMEOUT@|$read_timeout|g" \
  -e "s|@SERVER_MAXCONN@|$server_maxconn|g" \
  -e "s|@QUEUE_TIMEOUT@|$queue_timeout|g" \
  -e "s|@BIND@|$bind|g" \
  -e "s|@METRICS_BIND@|$metrics|g" \
  "$template" |
  SERVERS=$server_block RESOLVERS=$resolvers_block SOCKET=$socket_line OPTIONAL=$optional_block QUEUE_LENGTH="$fair_share_rules$nl$queue_length_rule" WAITING_LIMITS=$waiting_limits CLIENT_LIMITS=$client_limits awk '
    $0 == "@SERVERS@" { print ENVIRON["SERVERS"]; next }
    $0 == "@OPTIONAL_ROUTES@" { print ENVIRON["OPTIONAL"]; next }
    $0 == "@QUEUE_LENGTH@" { print ENVIRON["QUEUE_LENGTH"]; next }
    $0 == "@WAITING_LIMITS@" { print ENVIRON["WAITING_LIMITS"]; next }
    $0 == "@CLIENT_LIMITS@" { print ENVIRON["CLIENT_LIMITS"]; next }
    $0 == "@RESOLVERS@" { printf "%s", ENVIRON["RESOLVERS"]; next }
    $0 == "@STATS_SOCKET@" { print ENVIRON["SOCKET"]; next }
    { print }
  '
