#!/bin/sh
# edge-api-router container entrypoint: render the one template (render.sh), refuse to start
# on a configuration HAProxy rejects, then become HAProxy. `exec` matters: HAProxy must be
# the process that receives the stop signal (the official image's STOPSIGNAL is SIGUSR1, a
# soft stop that lets established requests finish).
#
# Extra settings: EDGE_API_ROUTER_OUT (default /tmp/haproxy.cfg: the image runs as the
# unprivileged haproxy user), EDGE_API_ROUTER_RENDER_ONLY (1/true/yes: render and check,
# then exit), HAPROXY_BIN (default haproxy).
set -eu

here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
out=${EDGE_API_ROUTER_OUT:-/tmp/haproxy.cfg}
bin=${HAPROXY_BIN:-haproxy}

case ${EDGE_API_ROUTER_RENDER_ONLY:-} in
  1|true|yes) render_only=1 ;;
  ''|0|false|no) render_only=0 ;;
  *) echo "edge-api-router: invalid EDGE_API_ROUTER_RENDER_ONLY='${EDGE_API_ROUTER_RENDER_ONLY}' (1/true/yes or 0/false/no)" >&2; exit 1 ;;
esac

sh "$here/render.sh" > "$out"
if ! "$bin" -c -q -f "$out"; then
  echo "edge-api-router: HAProxy rejects the rendered configuration $out" >&2
  exit 1
fi
echo "edge-api-router: rendered $out" >&2
[ "$render_only" = 0 ] || exit 0
exec "$bin" -W -db -f "$out"
