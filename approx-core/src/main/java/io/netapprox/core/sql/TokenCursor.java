package io.netapprox.core.sql;

import io.netapprox.core.sql.SqlLexer.Token;
import java.util.List;

/**
 * Reads a token list front to back, for the clause parser and the frameworks' own grammars; errors
 * it makes mark the token in {@code sql}, the whole statement (the tokens may be a part of it).
 */
public final class TokenCursor {
    private final String sql;
    private final List<Token> tokens;
    private int at;

    /** {@code tokens} must end with an END token. */
    public TokenCursor(String sql, List<Token> tokens, int at) {
        if (tokens.isEmpty() || !tokens.get(tokens.size() - 1).isEnd()) {
            throw new IllegalArgumentException("the tokens must end with an END token");
        }
        this.sql = sql;
        this.tokens = tokens;
        this.at = at;
    }

    /** The statement the tokens come from. */
    public String sql() {
        return sql;
    }

    /** The index of the next token. */
    public int at() {
        return at;
    }

    public Token peek() {
        return tokens.get(at);
    }

    /** The token {@code ahead} after the next one (END past the end). */
    public Token peek(int ahead) {
        return tokens.get(Math.min(at + ahead, tokens.size() - 1));
    }

    /** The token read last (the first one before anything is read). */
    public Token previous() {
        return tokens.get(Math.max(0, at - 1));
    }

    /** The next token, read; END stays (it is read again). */
    public Token next() {
        Token t = tokens.get(at);
        if (!t.isEnd()) {
            at++;
        }
        return t;
    }

    /** Reads word {@code w} or fails with "expected W[ why], found ...". */
    public Token expectWord(String w, String why) {
        Token t = next();
        if (!t.isWord(w)) {
            throw error(
                    "expected " + w + (why.isEmpty() ? "" : " " + why) + ", found " + t.shown(), t);
        }
        return t;
    }

    /** Reads symbol {@code c} or fails with "expected 'c' where, found ...". */
    public Token expectSymbol(char c, String where) {
        Token t = next();
        if (!t.isSymbol(c)) {
            throw error("expected '" + c + "' " + where + ", found " + t.shown(), t);
        }
        return t;
    }

    /** An error at {@code t}, marking its text. */
    public ApproxSqlException error(String problem, Token t) {
        return new ApproxSqlException(problem, sql, t.start(), Math.max(1, t.text().length()));
    }
}
