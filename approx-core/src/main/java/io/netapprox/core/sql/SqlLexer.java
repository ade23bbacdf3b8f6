package io.netapprox.core.sql;

import java.util.ArrayList;
import java.util.List;

/**
 * Splits SQL text into tokens with their offsets and parenthesis depth, following the lexical rules
 * of a {@link SqlDialect} as far as finding and reading the {@code WITH ERROR} clause (and Flink's
 * window query around it) needs: string literals, back-quoted identifiers ({@code ``} escapes a
 * back tick), {@code --} and {@code /* *}{@code /} comments, numbers, words and single-character
 * symbols. The dialects differ in string escapes (Spark: backslash and raw {@code r'..'}; Flink: a
 * doubled quote), comment nesting (Spark's nest), typed numbers (Spark's {@code 5L}) and {@code $}
 * in names (Flink). Never fails: an unterminated string or comment runs to the end of the text (the
 * framework's own parser reports it).
 */
public final class SqlLexer {
    /** What a token is. */
    public enum Kind {
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
    public record Token(Kind kind, String text, String value, int start, int depth) {
        /** An END token at {@code offset}: where a part of a statement read on its own stops. */
        public static Token end(int offset) {
            return new Token(Kind.END, "", "", offset, 0);
        }

        public boolean isWord(String w) {
            return kind == Kind.WORD && text.equalsIgnoreCase(w);
        }

        public boolean isSymbol(char c) {
            return kind == Kind.SYMBOL && text.charAt(0) == c;
        }

        public boolean isIdentifier() {
            return kind == Kind.WORD || kind == Kind.QUOTED_IDENTIFIER;
        }

        public boolean isEnd() {
            return kind == Kind.END;
        }

        /** The offset after the token. */
        public int end() {
            return start + text.length();
        }

        /** How an error message shows it. */
        public String shown() {
            return kind == Kind.END ? "end of input" : "'" + text + "'";
        }
    }

    private SqlLexer() {}

    /** The tokens of {@code sql}, ending with an END token at its length. */
    public static List<Token> tokenize(String sql, SqlDialect dialect) {
        boolean spark = dialect == SqlDialect.SPARK;
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
                i = commentEnd(sql, i, spark);
            } else if (spark
                    && (c == 'r' || c == 'R')
                    && i + 1 < n
                    && (sql.charAt(i + 1) == '\'' || sql.charAt(i + 1) == '"')) {
                int end = backslashQuotedEnd(sql, i + 1, true);
                out.add(
                        new Token(
                                Kind.STRING,
                                sql.substring(i, end),
                                content(sql, i + 1, end),
                                i,
                                depth));
                i = end;
            } else if (c == '\'' || c == '"' || c == '`') {
                int end =
                        spark && c != '`'
                                ? backslashQuotedEnd(sql, i, false)
                                : doubledQuotedEnd(sql, i);
                String value =
                        spark && c != '`'
                                ? unescape(content(sql, i, end))
                                : content(sql, i, end).replace("" + c + c, "" + c);
                Kind kind = c == '`' ? Kind.QUOTED_IDENTIFIER : Kind.STRING;
                out.add(new Token(kind, sql.substring(i, end), value, i, depth));
                i = end;
            } else if (Character.isDigit(c)
                    || (c == '.' && i + 1 < n && Character.isDigit(sql.charAt(i + 1)))) {
                int j = numberEnd(sql, i, spark);
                String t = sql.substring(i, j);
                out.add(new Token(Kind.NUMBER, t, t, i, depth));
                i = j;
            } else if (Character.isLetter(c) || c == '_') {
                int j = i + 1;
                while (j < n && isNamePart(sql.charAt(j), spark)) {
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

    private static boolean isNamePart(char c, boolean spark) {
        return Character.isLetterOrDigit(c) || c == '_' || (!spark && c == '$');
    }

    /** The index after the comment at {@code i}; Spark's comments nest, Calcite's do not. */
    private static int commentEnd(String sql, int i, boolean nested) {
        if (!nested) {
            int end = sql.indexOf("*/", i + 2);
            return end < 0 ? sql.length() : end + 2;
        }
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

    /** The index after the closing quote of the string at {@code i}, backslash escaping. */
    private static int backslashQuotedEnd(String sql, int i, boolean raw) {
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

    /** The index after the closing quote of the text at {@code i}; a doubled quote escapes. */
    private static int doubledQuotedEnd(String sql, int i) {
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

    /** The text between the quote at {@code quote} and its closing one (if there is one). */
    private static String content(String sql, int quote, int end) {
        int close = end > quote + 1 && sql.charAt(end - 1) == sql.charAt(quote) ? end - 1 : end;
        return sql.substring(quote + 1, Math.max(quote + 1, close));
    }

    private static String unescape(String s) {
        StringBuilder v = new StringBuilder();
        for (int j = 0; j < s.length(); j++) {
            char c = s.charAt(j);
            if (c == '\\' && j + 1 < s.length()) {
                v.append(s.charAt(++j));
            } else {
                v.append(c);
            }
        }
        return v.toString();
    }

    /** Digits, one dot and an exponent are one token; in Spark also a type suffix (L, D, BD). */
    private static int numberEnd(String sql, int i, boolean typed) {
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
        while (typed && j < n && isNamePart(sql.charAt(j), true)) {
            j++;
        }
        return j;
    }
}
