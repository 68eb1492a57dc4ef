/* A tool in the minimal JSON-RPC dialect, in C, as in-house tools are often written: no JSON
 * library, keys found with strstr. The first line read is the handshake, whatever its method;
 * then `echo` (its `text`, as a string) and `add` (`a` + `b`, as a number). A line it does
 * not understand (a notification, an unknown method) is never answered. Exits at end of
 * input. Compiled by the tests with the machine's `cc`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINE_MAX_BYTES 65536

static const char *HANDSHAKE =
    "{\"server_info\":{\"name\":\"minimal-c\",\"version\":\"1.0\"},"
    "\"capabilities\":{\"tools\":["
    "{\"name\":\"echo\",\"description\":\"Return the text argument.\","
    "\"input_schema\":{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},"
    "\"required\":[\"text\"]}},"
    "{\"name\":\"add\",\"description\":\"Add two numbers.\","
    "\"input_schema\":{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"number\"},"
    "\"b\":{\"type\":\"number\"}},\"required\":[\"a\",\"b\"]}}]}}";

/* The text right after `"key":` (and any spaces), or NULL. */
static const char *value_of(const char *line, const char *key) {
    char quoted[64];
    snprintf(quoted, sizeof quoted, "\"%s\"", key);
    const char *at = strstr(line, quoted);
    if (at == NULL) return NULL;
    at += strlen(quoted);
    while (*at == ' ') at++;
    if (*at != ':') return NULL;
    at++;
    while (*at == ' ') at++;
    return at;
}

/* Copy a JSON string's body (escapes kept as they are) into `out`; 0 if it is not one. */
static int string_body(const char *at, char *out, size_t size) {
    size_t n = 0;
    if (at == NULL || *at != '"') return 0;
    for (at++; *at && *at != '"'; at++) {
        if (*at == '\\' && at[1]) {
            if (n + 2 >= size) return 0;
            out[n++] = *at++;
        }
        if (n + 1 >= size) return 0;
        out[n++] = *at;
    }
    out[n] = '\0';
    return *at == '"';
}

int main(void) {
    static char line[LINE_MAX_BYTES], method[256], text[LINE_MAX_BYTES];
    int first = 1;
    while (fgets(line, sizeof line, stdin) != NULL) {
        const char *id_at = value_of(line, "id");
        if (id_at == NULL || *id_at < '0' || *id_at > '9') continue; /* no id: ignore */
        long id = strtol(id_at, NULL, 10);
        if (first) {
            first = 0;
            printf("{\"jsonrpc\":\"2.0\",\"id\":%ld,\"result\":%s}\n", id, HANDSHAKE);
        } else if (!string_body(value_of(line, "method"), method, sizeof method)) {
            continue;
        } else if (strcmp(method, "echo") == 0) {
            if (!string_body(value_of(line, "text"), text, sizeof text)) text[0] = '\0';
            printf("{\"jsonrpc\":\"2.0\",\"id\":%ld,\"result\":\"%s\"}\n", id, text);
        } else if (strcmp(method, "add") == 0) {
            const char *a = value_of(line, "a"), *b = value_of(line, "b");
            if (a == NULL || b == NULL) {
                printf("{\"jsonrpc\":\"2.0\",\"id\":%ld,\"error\":{\"code\":-32602,"
                       "\"message\":\"add needs a and b\"}}\n", id);
            } else {
                printf("{\"jsonrpc\":\"2.0\",\"id\":%ld,\"result\":%.17g}\n", id,
                       strtod(a, NULL) + strtod(b, NULL));
            }
        } else {
            continue; /* unknown method: never answered */
        }
        fflush(stdout);
    }
    return 0;
}
