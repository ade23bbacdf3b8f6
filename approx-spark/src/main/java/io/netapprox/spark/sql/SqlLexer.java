package io.netapprox.spark.sql;

import java.util.ArrayList;
import java.util.List;

/**
 * Splits SQL text into tokens with their offsets, following Spark SQL's lexical rules as far as
 * finding the {@code WITH ERROR} clause needs: string literals ({@code '..'}, {@code ".."}, with
 * backslash escapes, raw {@code r'..'}), back-quoted identifiers, {@code --} and nested {@code /*
 * *}{@code /} comments, numbers, words and single-character symbols. Never fails: an unterminated
 * string or comment runs to the end of the text (Spark's own parser reports it).
 */
final class SqlLexer {
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
     * and strings) or the text.
     */
    record Token(Kind kind, String text, String value, int start, int depth) {
        boolean isWord(String w) {
            return kind == Kind.WORD && text.equalsIgnoreCase(w);
        }

        boolean isSymbol(char c) {
            return kind == Kind.SYMBOL && text.length() == 1 && text.charAt(0) == c;
        }

        /** How an error message shows it. */
        String shown() {
            return kind == Kind.END ? "end of input" : "'" + text + "'";
        }
    }

    private SqlLexer() {}

    static List<Token> tokenize(String sql) {
        List<Token> out = new ArrayList<>();
        int n = sql.length();
        int i = 0;
        int depth = 0;
        while (i < n) {
            char c = sql.charAt(i);
            if (Character.isWhitespace(c)) {
                i++;
            } else if (c == '-' && i + 1 < n && sql.charAt(i + 1) == '-') {
                while (i < n && sql.charAt(i) != '\n') {
                    i++;
                }
            } else if (c == '/' && i + 1 < n && sql.charAt(i + 1) == '*') {
                i = skipBracketedComment(sql, i);
            } else if ((c == 'r' || c == 'R')
                    && i + 1 < n
                    && (sql.charAt(i + 1) == '\'' || sql.charAt(i + 1) == '"')) {
                int end = stringEnd(sql, i + 1, true);
                out.add(
                        new Token(
                                Kind.STRING,
                                sql.substring(i, end),
                                rawContent(sql, i + 1, end),
                                i,
                                depth));
                i = end;
            } else if (c == '\'' || c == '"') {
                int end = stringEnd(sql, i, false);
                out.add(
                        new Token(
                                Kind.STRING,
                                sql.substring(i, end),
                                unescape(sql, i, end),
                                i,
                                depth));
                i = end;
            } else if (c == '`') {
                int j = i + 1;
                StringBuilder v = new StringBuilder();
                while (j < n) {
                    if (sql.charAt(j) == '`') {
                        if (j + 1 < n && sql.charAt(j + 1) == '`') {
                            v.append('`');
                            j += 2;
                            continue;
                        }
                        j++;
                        break;
                    }
                    v.append(sql.charAt(j++));
                }
                out.add(
                        new Token(
                                Kind.QUOTED_IDENTIFIER,
                                sql.substring(i, j),
                                v.toString(),
                                i,
                                depth));
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
                        && (Character.isLetterOrDigit(sql.charAt(j)) || sql.charAt(j) == '_')) {
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

    private static int skipBracketedComment(String sql, int i) {
        int n = sql.length();
        int level = 0;
        while (i < n) {
            if (sql.startsWith("/*", i)) {
                level++;
                i += 2;
            } else if (sql.startsWith("*/", i)) {
                level--;
                i += 2;
                if (level == 0) {
                    return i;
                }
            } else {
                i++;
            }
        }
        return n;
    }

    /** The index after the closing quote of the string starting at {@code i}. */
    private static int stringEnd(String sql, int i, boolean raw) {
        char q = sql.charAt(i);
        int j = i + 1;
        while (j < sql.length()) {
            char c = sql.charAt(j);
            if (c == '\\' && !raw) {
                j += 2;
            } else if (c == q) {
                return j + 1;
            } else {
                j++;
            }
        }
        return sql.length();
    }

    private static String rawContent(String sql, int quote, int end) {
        int close = end > quote + 1 && sql.charAt(end - 1) == sql.charAt(quote) ? end - 1 : end;
        return sql.substring(quote + 1, close);
    }

    private static String unescape(String sql, int quote, int end) {
        int close = end > quote + 1 && sql.charAt(end - 1) == sql.charAt(quote) ? end - 1 : end;
        StringBuilder v = new StringBuilder();
        for (int j = quote + 1; j < close; j++) {
            char c = sql.charAt(j);
            if (c == '\\' && j + 1 < close) {
                v.append(sql.charAt(++j));
            } else {
                v.append(c);
            }
        }
        return v.toString();
    }

    /** Digits, one dot, an exponent, and a type suffix (L, D, BD, ...) are one token. */
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
        while (j < n && (Character.isLetterOrDigit(sql.charAt(j)) || sql.charAt(j) == '_')) {
            j++;
        }
        return j;
    }
}
