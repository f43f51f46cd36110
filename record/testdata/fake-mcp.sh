#!/bin/sh
# A misbehaving MCP server for the error paths of airlock tools (stdio):
#   junk   prints a line that is not JSON-RPC, then waits
#   exit   complains on standard error and exits 3 before any answer
#   hang   reads nothing and answers nothing
case "$1" in
junk) printf 'this is not JSON-RPC \033[31mred\033[0m\n'; exec sleep 30 ;;
exit) echo "fake-mcp: cannot open config /etc/fake.conf" >&2; exit 3 ;;
hang) exec sleep 600 ;;
*) echo "usage: fake-mcp.sh junk|exit|hang" >&2; exit 2 ;;
esac
