package io.netapprox.flink;

import java.util.Collection;
import java.util.List;
import org.apache.flink.api.common.ExecutionConfig;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.windowing.triggers.EventTimeTrigger;
import org.apache.flink.streaming.api.windowing.triggers.Trigger;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;

/**
 * The window operator after the receiver: a stratum sample belongs to the window its sender
 * assigned (with the user's assigner), so sliding windows are not assigned twice. Fires on the
 * event-time watermark at the window's end, like the default trigger of Flink's event-time
 * assigners.
 */
final class CarriedWindowAssigner<K> extends WindowAssigner<WindowShare<K>, TimeWindow> {
    private static final long serialVersionUID = 1L;

    @Override
    public Collection<TimeWindow> assignWindows(
            WindowShare<K> element, long timestamp, WindowAssignerContext context) {
        return List.of(new TimeWindow(element.windowStart, element.windowEnd));
    }

    @Override
    @SuppressWarnings({"unchecked", "rawtypes"})
    public Trigger<WindowShare<K>, TimeWindow> getDefaultTrigger() {
        return (Trigger) EventTimeTrigger.create();
    }

    @Override
    public TypeSerializer<TimeWindow> getWindowSerializer(ExecutionConfig config) {
        return new TimeWindow.Serializer();
    }

    @Override
    public boolean isEventTime() {
        return true;
    }

    @Override
    public String toString() {
        return "CarriedWindowAssigner";
    }
}
