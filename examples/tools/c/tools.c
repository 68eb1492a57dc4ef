/* echo, word_count and now in C (POSIX), in the minimal JSON-RPC dialect.
 *
 * The first line read is the handshake, whatever it asks: the answer lists the tools. Every
 * later line is one call, {"id":N,"method":"<tool>","params":{...}}, answered on one line with
 * "result" (any JSON) or "error". Logs go to stderr only. Build with `make` in this folder
 * (any C99 compiler), then `paicli mcp probe -- examples/tools/c/tools`. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *HANDSHAKE =
    "{\"server_info\":{\"name\":\"example-tools-c\",\"version\":\"1.0.0\"},"
    "\"capabilities\":{\"tools\":["
    "{\"name\":\"echo\",\"description\":\"Return the text unchanged.\","
    "\"input_schema\":{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},"
    "\"required\":[\"text\"]}},"
    "{\"name\":\"word_count\","
    "\"description\":\"Count the words of a text (runs of non-blank characters).\","
    "\"input_schema\":{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},"
    "\"required\":[\"text\"]}},"
    "{\"name\":\"now\","
    "\"description\":\"The current time in UTC, as ISO 8601 (2026-01-31T12:00:00Z).\","
    "\"input_schema\":{\"type\":\"object\",\"properties\":{}}}]}}";

/* The end of the JSON string starting at `s` (just past its closing quote), or NULL. */
static const char *string_end(const char *s) {
    for (s++; *s; s++) {
        if (*s == '\\' && s[1]) s++;
        else if (*s == '"') return s + 1;
    }
    return NULL;
}

/* The end of the value (a string, number, true, false or null) starting at `s`. */
static const char *scalar_end(const char *s) {
    if (*s == '"') return string_end(s);
    while (*s && strchr(",}] \t\r\n", *s) == NULL) s++;
    return s;
}

/* The value of the first member named `key` at nesting `depth` (1: the message itself, 2:
 * its params); strings are skipped whole, so a key inside a string is never found. */
static const char *find(const char *line, const char *key, int depth, const char **end) {
    size_t length = strlen(key);
    int level = 0;
    for (const char *s = line; *s; s++) {
        if (*s == '{' || *s == '[') level++;
        if (*s == '}' || *s == ']') level--;
        if (*s != '"') continue;
        const char *after = string_end(s);
        if (after == NULL) return NULL;
        const char *colon = after + strspn(after, " \t");
        if (level == depth && *colon == ':' && (size_t)(after - s) == length + 2 &&
            strncmp(s + 1, key, length) == 0) {
            const char *value = colon + 1 + strspn(colon + 1, " \t");
            *end = scalar_end(value);
            return *end ? value : NULL;
        }
        s = after - 1;
    }
    return NULL;
}

/* Words of a JSON string's body: \n \r \t \f \b escapes count as blanks. */
static long count_words(const char *s, const char *end) {
    long words = 0;
    int in_word = 0;
    for (s++, end--; s < end; s++) {
        int blank = strchr(" \t\r\n\f\v", *s) != NULL;
        if (*s == '\\') {
            s++;
            blank = strchr("nrtfb", *s) != NULL;
        }
        if (!blank && !in_word) words++;
        in_word = !blank;
    }
    return words;
}

int main(void) {
    char *line = NULL;
    size_t size = 0;
    int first = 1;
    /* getline: lines of any length; the loop ends at end of input. */
    while (getline(&line, &size, stdin) != -1) {
        const char *id_end, *method_end, *text_end;
        const char *id = find(line, "id", 1, &id_end);
        if (id == NULL) continue; /* a notification: never answered */
        printf("{\"jsonrpc\":\"2.0\",\"id\":%.*s,", (int)(id_end - id), id);
        const char *method = find(line, "method", 1, &method_end);
        const char *text = find(line, "text", 2, &text_end);
        int is_text = text != NULL && *text == '"';
        if (first) {
            first = 0;
            printf("\"result\":%s}\n", HANDSHAKE);
        } else if (method && strncmp(method, "\"echo\"", 6) == 0) {
            /* The string is written back exactly as it came, escapes and all. */
            printf("\"result\":%.*s}\n", is_text ? (int)(text_end - text) : 2,
                   is_text ? text : "\"\"");
        } else if (method && strncmp(method, "\"word_count\"", 12) == 0) {
            printf("\"result\":{\"words\":%ld}}\n", is_text ? count_words(text, text_end) : 0L);
        } else if (method && strncmp(method, "\"now\"", 5) == 0) {
            char stamp[32];
            time_t seconds = time(NULL);
            strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", gmtime(&seconds));
            printf("\"result\":\"%s\"}\n", stamp);
        } else {
            int shown = method ? (int)(method_end - method) : 6;
            fprintf(stderr, "unknown method: %.*s\n", shown > 80 ? 80 : shown, method ? method : "(none)");
            printf("\"error\":{\"code\":-32601,\"message\":\"unknown tool\"}}\n");
        }
        /* stdout to a pipe is fully buffered: without this the client waits forever. */
        fflush(stdout);
    }
    free(line);
    return 0;
}
