package io.netapprox.flink.sql;

import java.util.ArrayList;
import java.util.List;

/**
 * Splits Flink SQL text into tokens with their offsets and parenthesis depth, following Flink's
 * lexical rules (Calcite with back-tick quoting) as far as the wrapper grammar of {@link
 * WindowQueryParser} needs: {@code '..'} string literals ({@code ''} escapes a quote), back-quoted
 * identifiers ({@code ``} escapes a back tick), {@code --} and {@code /* *}{@code /} comments,
 * numbers, words and single-character symbols. Never fails: an unterminated string or comment runs
 * to the end of the text (Flink's own parser reports it).
 */
final class SqlTokens {
    enum Kind {
        WORD,
        QUOTED_IDENTIFIER,
        STRING,
        NUMBER,
        SYMBOL,
        END
    }

    /**
     * One token: {@code text} is the source text, {@code value} the unquoted content (identifiers
     * and strings) or the text; {@code depth} counts the parentheses open before it.
     */
    record Token(Kind kind, String text, String value, int start, int depth) {
        boolean isWord(String w) {
            return kind == Kind.WORD && text.equalsIgnoreCase(w);
        }

        boolean isSymbol(char c) {
            return kind == Kind.SYMBOL && text.charAt(0) == c;
        }

        boolean isIdentifier() {
            return kind == Kind.WORD || kind == Kind.QUOTED_IDENTIFIER;
        }

        int end() {
            return start + text.length();
        }

        /** How an error message shows it. */
        String shown() {
            return kind == Kind.END ? "end of input" : "'" + text + "'";
        }
    }

    private SqlTokens() {}

    static List<Token> tokenize(String sql) {
        List<Token> out = new ArrayList<>();
        int n = sql.length();
        int i = 0;
        int depth = 0;
        while (i < n) {
            char c = sql.charAt(i);
            if (Character.isWhitespace(c)) {
                i++;
            } else if (sql.startsWith("--", i)) {
                while (i < n && sql.charAt(i) != '\n') {
                    i++;
                }
            } else if (sql.startsWith("/*", i)) {
                int end = sql.indexOf("*/", i + 2);
                i = end < 0 ? n : end + 2;
            } else if (c == '\'' || c == '`' || c == '"') {
                int j = quotedEnd(sql, i);
                Kind kind = c == '`' ? Kind.QUOTED_IDENTIFIER : Kind.STRING;
                out.add(new Token(kind, sql.substring(i, j), unquote(sql, i, j), i, depth));
                i = j;
            } else if (Character.isDigit(c)
                    || (c == '.' && i + 1 < n && Character.isDigit(sql.charAt(i + 1)))) {
                int j = numberEnd(sql, i);
                String t = sql.substring(i, j);
                out.add(new Token(Kind.NUMBER, t, t, i, depth));
                i = j;
            } else if (Character.isLetter(c) || c == '_') {
                int j = i + 1;
                while (j < n
                        && (Character.isLetterOrDigit(sql.charAt(j))
                                || sql.charAt(j) == '_'
                                || sql.charAt(j) == '$')) {
                    j++;
                }
                String t = sql.substring(i, j);
                out.add(new Token(Kind.WORD, t, t, i, depth));
                i = j;
            } else {
                if (c == ')') {
                    depth = Math.max(0, depth - 1);
                }
                out.add(new Token(Kind.SYMBOL, String.valueOf(c), String.valueOf(c), i, depth));
                if (c == '(') {
                    depth++;
                }
                i++;
            }
        }
        out.add(new Token(Kind.END, "", "", n, depth));
        return out;
    }

    /**
     * The index after the closing quote of the quoted text at {@code i} (a doubled quote escapes).
     */
    private static int quotedEnd(String sql, int i) {
        char q = sql.charAt(i);
        int j = i + 1;
        while (j < sql.length()) {
            if (sql.charAt(j) == q) {
                if (j + 1 < sql.length() && sql.charAt(j + 1) == q) {
                    j += 2;
                    continue;
                }
                return j + 1;
            }
            j++;
        }
        return sql.length();
    }

    private static String unquote(String sql, int start, int end) {
        char q = sql.charAt(start);
        int close = end > start + 1 && sql.charAt(end - 1) == q ? end - 1 : end;
        String doubled = String.valueOf(q) + q;
        return sql.substring(start + 1, close).replace(doubled, String.valueOf(q));
    }

    /** Digits, one dot and an exponent are one token. */
    private static int numberEnd(String sql, int i) {
        int n = sql.length();
        int j = i;
        while (j < n && Character.isDigit(sql.charAt(j))) {
            j++;
        }
        if (j < n && sql.charAt(j) == '.') {
            j++;
            while (j < n && Character.isDigit(sql.charAt(j))) {
                j++;
            }
        }
        if (j < n && (sql.charAt(j) == 'e' || sql.charAt(j) == 'E')) {
            int k = j + 1;
            if (k < n && (sql.charAt(k) == '+' || sql.charAt(k) == '-')) {
                k++;
            }
            if (k < n && Character.isDigit(sql.charAt(k))) {
                j = k;
                while (j < n && Character.isDigit(sql.charAt(j))) {
                    j++;
                }
            }
        }
        return j;
    }
}
