#!/bin/sh
# A tool in the minimal JSON-RPC dialect as a POSIX shell script (sed for "parsing"). The
# first line read is the handshake, whatever its method; then `upper` (its `text` in capitals).
# Fragile on purpose, as such scripts are: anything else (a notification, an unknown method,
# a second handshake) makes it exit with status 2. Exits at end of input.
field() { # the string or number after "$1": in the line $2 (no escaped quotes)
    printf '%s\n' "$2" | sed -n "s/.*\"$1\":[ ]*\"\{0,1\}\([^\",}]*\).*/\1/p"
}
first=1
while IFS= read -r line; do
    id=$(printf '%s\n' "$line" | sed -n 's/.*"id":[ ]*\([0-9][0-9]*\).*/\1/p')
    method=$(field method "$line")
    if [ -z "$id" ]; then
        echo "unexpected message without an id: $line" >&2
        exit 2
    fi
    if [ "$first" = 1 ]; then
        first=0
        printf '{"jsonrpc":"2.0","id":%s,"result":{"server_info":{"name":"minimal-sh","version":"1.0"},' "$id"
        printf '"capabilities":{"tools":[{"name":"upper","description":"The text in capitals.",'
        printf '"input_schema":{"type":"object","properties":{"text":{"type":"string"}}}}]}}}\n'
    elif [ "$method" = upper ]; then
        text=$(field text "$line" | tr '[:lower:]' '[:upper:]')
        printf '{"jsonrpc":"2.0","id":%s,"result":"%s"}\n' "$id" "$text"
    else
        echo "unexpected method: $method" >&2
        exit 2
    fi
done
