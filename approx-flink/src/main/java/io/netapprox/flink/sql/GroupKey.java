package io.netapprox.flink.sql;

import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.types.Row;

/**
 * A row's GROUP BY values as one string, the group key of the approximate query (and so its
 * stratum): each value as {@code <length>:<text>}, a NULL as {@code -}, so that any values, NULL
 * and empty strings included, decode back to themselves ({@link #decode}).
 */
final class GroupKey implements KeySelector<Row, String> {
    private static final long serialVersionUID = 1L;

    private final int[] fields;

    /** The key of the values at {@code fields} of a row. */
    GroupKey(int[] fields) {
        this.fields = fields.clone();
    }

    @Override
    public String getKey(Row row) {
        StringBuilder b = new StringBuilder();
        for (int f : fields) {
            Object v = row.getField(f);
            if (v == null) {
                b.append('-');
            } else {
                String s = v.toString();
                b.append(s.length()).append(':').append(s);
            }
        }
        return b.toString();
    }

    /** The values of a key, each as an instance of its column's type ({@link #supports}). */
    static List<Object> decode(String key, List<LogicalType> types) {
        List<Object> values = new ArrayList<>(types.size());
        int i = 0;
        for (LogicalType type : types) {
            if (key.charAt(i) == '-') {
                values.add(null);
                i++;
                continue;
            }
            int colon = key.indexOf(':', i);
            int length = Integer.parseInt(key.substring(i, colon));
            String s = key.substring(colon + 1, colon + 1 + length);
            values.add(parse(s, type));
            i = colon + 1 + length;
        }
        return values;
    }

    /** True for the group column types a key keeps exactly: strings, booleans and integers. */
    static boolean supports(LogicalType type) {
        return switch (type.getTypeRoot()) {
            case CHAR, VARCHAR, BOOLEAN, TINYINT, SMALLINT, INTEGER, BIGINT -> true;
            default -> false;
        };
    }

    private static Object parse(String s, LogicalType type) {
        return switch (type.getTypeRoot()) {
            case CHAR, VARCHAR -> s;
            case BOOLEAN -> Boolean.parseBoolean(s);
            case TINYINT -> Byte.parseByte(s);
            case SMALLINT -> Short.parseShort(s);
            case INTEGER -> Integer.parseInt(s);
            case BIGINT -> Long.parseLong(s);
            default -> throw new IllegalArgumentException("unsupported group type " + type);
        };
    }
}
