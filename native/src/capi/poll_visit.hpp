// Not part of the public C API (nothing here is exported from libnetapprox.so): na_poll_events with a callback per
// event instead of an output array, for the JNI binding compiled into the same library. Each event goes from the
// driver's queue straight into the sink as an na_event on the stack, instead of through two arrays of events.
#pragma once

#include "netapprox/netapprox.h"

namespace netapprox::capi {

// Called for event `index` (0, 1, ...) of one poll, under the driver's lock: must be short and must not call the
// C API. `ev` is valid only during the call.
using EventSink = void (*)(void* ctx, int index, const na_event& ev);

// As na_poll_events (at most min(max, 1024) events, the same waiting and return values), handing each to `sink`.
int poll_events_visit(na_engine* eng, int max, int timeout_ms, EventSink sink, void* ctx);

}  // namespace netapprox::capi
