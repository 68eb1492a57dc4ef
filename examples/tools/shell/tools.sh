#!/bin/sh
# echo, word_count and now as a POSIX shell script, in the minimal JSON-RPC dialect.
#
# The first line read is the handshake, whatever it asks: the answer lists the tools. Every
# later line is one call, {"id":N,"method":"<tool>","params":{...}}, answered on one line with
# "result" (any JSON) or "error". Logs go to stderr only. Needs only sh, sed, wc and date.
# Run it with `paicli mcp probe -- sh examples/tools/shell/tools.sh`.

CR=$(printf '\r')

# The raw JSON value of key $1 in the text on stdin: a string (quotes and escapes kept as
# they are, so it can be written back as JSON unchanged) or a number. Empty when absent.
json_value() {
    sed -n -E "s/^[^\"]*(\"([^\"\\\\]|\\\\.)*\"[^\"]*)*\"$1\"[[:space:]]*:[[:space:]]*(\"([^\"\\\\]|\\\\.)*\"|-?[0-9.eE+-]+|null).*/\3/p"
}

reply() { # id, then the rest of the answer ("result":... or "error":...)
    printf '{"jsonrpc":"2.0","id":%s,%s}\n' "$1" "$2"
}

handshake='"result":{"server_info":{"name":"example-tools-sh","version":"1.0.0"},"capabilities":{"tools":[
{"name":"echo","description":"Return the text unchanged.","input_schema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}},
{"name":"word_count","description":"Count the words of a text (runs of non-blank characters).","input_schema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}},
{"name":"now","description":"The current time in UTC, as ISO 8601 (2026-01-31T12:00:00Z).","input_schema":{"type":"object","properties":{}}}]}}'
handshake=$(printf '%s' "$handshake" | tr -d '\n')

first=1
# `|| [ -n "$line" ]` keeps a last line that has no newline; the loop ends at end of input.
while IFS= read -r line || [ -n "$line" ]; do
    line=${line%"$CR"}                # a client on Windows may end lines with CRLF
    envelope=${line%%\"params\"*}     # id and method come before the arguments
    id=$(printf '%s\n' "$envelope" | json_value id)
    [ -n "$id" ] || continue          # a notification: never answered
    if [ "$first" = 1 ]; then
        first=0
        reply "$id" "$handshake"
        continue
    fi
    method=$(printf '%s\n' "$envelope" | json_value method)
    text=$(printf '%s\n' "${line#"$envelope"}" | json_value text)
    case $method in
    '"echo"')
        reply "$id" "\"result\":${text:-\"\"}" ;;
    '"word_count"')
        # Escaped backslashes first, then \n \r \t \f \b count as blanks between words.
        words=$(printf '%s\n' "$text" | sed -e 's/^"//' -e 's/"$//' -e 's/\\\\/x/g' \
            -e 's/\\[nrtfb]/ /g' | wc -w | tr -d ' ')
        reply "$id" "\"result\":{\"words\":$words}" ;;
    '"now"')
        reply "$id" "\"result\":\"$(date -u +%Y-%m-%dT%H:%M:%SZ)\"" ;;
    *)
        echo "unknown method: $method" >&2
        reply "$id" "\"error\":{\"code\":-32601,\"message\":\"unknown tool\"}" ;;
    esac
done
