"""Segment encoding, validation of what arrives, chunk bounds and magnitude groups."""

import unittest

import numpy as np
from netapprox_torch.segments import (
    HEADER_BYTES,
    Collector,
    MagnitudeGroups,
    SegmentError,
    Segments,
    bounds,
    decode,
    encode,
)


class SegmentTest(unittest.TestCase):
    def test_round_trip(self):
        values = np.arange(10, dtype=np.float32) / 7
        data = encode(5, 100, 40, values)
        self.assertEqual(HEADER_BYTES + 40, len(data))
        offset, got = decode(data, 5, 100)
        self.assertEqual(40, offset)
        np.testing.assert_array_equal(values, got)

    def test_every_bad_field_is_refused(self):
        good = bytearray(encode(3, 50, 10, np.ones(4, dtype=np.float32)))
        cases = {
            "short": bytes(good[:10]),
            "magic": bytes(b"XXXX" + good[4:]),
            "version": bytes(good[:4] + b"\x09" + good[5:]),
            "truncated payload": bytes(good[:-1]),
            "extra payload": bytes(good + b"\x00\x00\x00\x00"),
        }
        for name, data in cases.items():
            with self.subTest(name), self.assertRaises(SegmentError):
                decode(data, 3, 50)
        with self.assertRaises(SegmentError):  # another step
            decode(bytes(good), 4, 50)
        with self.assertRaises(SegmentError):  # another chunk
            decode(bytes(good), 3, 51)
        beyond = encode(3, 50, 48, np.ones(2, dtype=np.float32))
        tampered = bytearray(beyond)
        tampered[16:20] = (49).to_bytes(4, "little")  # offset 49 + 2 values > 50
        with self.assertRaises(SegmentError):
            decode(bytes(tampered), 3, 50)

    def test_random_bytes_never_decode_silently(self):
        rng = np.random.default_rng(1)
        for _ in range(2000):
            data = rng.integers(0, 256, size=int(rng.integers(0, 80)), dtype=np.uint8).tobytes()
            try:
                offset, values = decode(data, 0, 16)
            except SegmentError:
                continue
            self.assertLessEqual(offset + values.size, 16)

    def test_rows_are_the_segments_encode_makes(self):
        chunk = np.random.default_rng(2).standard_normal(1000).astype(np.float32)
        for seg in (1, 7, 344, 1000, 4096):
            rows = Segments(11, chunk, seg)
            self.assertEqual(-(-1000 // seg), rows.count)
            for k in range(rows.count):
                off = k * seg
                self.assertEqual(encode(11, 1000, off, chunk[off : off + seg]), rows.tobytes(k), (seg, k))
        empty = Segments(4, np.zeros(0, dtype=np.float32), 344)
        self.assertEqual(1, empty.count)
        self.assertEqual(encode(4, 0, 0, np.zeros(0, dtype=np.float32)), empty.tobytes(0))

    def test_collector_places_what_arrived_in_any_order(self):
        chunk = np.arange(1000, dtype=np.float32)
        rows = Segments(3, chunk, 64)
        got = Collector(3, 1000, 64)
        order = np.random.default_rng(5).permutation(rows.count)[:-3]  # 3 segments never arrive
        for k in order:
            got.add(int(k % 2), int(rows.addresses[k]), int(rows.lengths[k]))
        out = np.full(1000, -1.0, dtype=np.float32)
        per_group = got.place(out)
        self.assertEqual(order.size, sum(per_group.values()))
        self.assertFalse(got.complete())
        for k in range(rows.count):
            part = slice(k * 64, min(1000, k * 64 + 64))
            want = chunk[part] if k in set(order.tolist()) else np.full(part.stop - part.start, -1.0)
            np.testing.assert_array_equal(want, out[part], k)

    def test_collector_refuses_what_decode_refuses(self):
        good = bytearray(encode(3, 50, 10, np.ones(4, dtype=np.float32)))
        bad = {
            "short": bytes(good[:10]),
            "magic": bytes(b"XXXX" + good[4:]),
            "version": bytes(good[:4] + b"\x09" + good[5:]),
            "truncated payload": bytes(good[:-1]),
            "other step": encode(4, 50, 10, np.ones(4, dtype=np.float32)),
            "other chunk": encode(3, 51, 10, np.ones(4, dtype=np.float32)),
            "empty in a non-empty chunk": encode(3, 50, 10, np.ones(0, dtype=np.float32)),
        }
        tampered = bytearray(encode(3, 50, 40, np.ones(4, dtype=np.float32)))
        tampered[16:20] = (49).to_bytes(4, "little")  # offset 49 + 4 values > 50
        bad["beyond the chunk"] = bytes(tampered)
        for name, data in bad.items():
            with self.subTest(name):
                got = Collector(3, 50, 4)
                got.add(0, bytes(good), len(good))
                got.add(0, data, len(data))
                out = np.zeros(50, dtype=np.float32)
                with self.assertRaises(SegmentError):
                    got.place(out)
                self.assertFalse(out.any(), "nothing is placed when a segment is bad")
        got = Collector(3, 50, 4)
        longer = encode(3, 50, 0, np.ones(5, dtype=np.float32))
        with self.assertRaises(SegmentError):  # more values than this rank's segments hold
            got.add(0, longer, len(longer))
        for _ in range(13):  # a chunk of 50 has 13 segments of 4
            got.add(0, bytes(good), len(good))
        with self.assertRaises(SegmentError):
            got.add(0, bytes(good), len(good))

    def test_collector_complete_needs_every_segment_once(self):
        chunk = np.arange(10, dtype=np.float32)
        rows = Segments(0, chunk, 4)  # 3 segments
        got = Collector(0, 10, 4)
        for k in (0, 1, 1):  # segment 1 twice, segment 2 never
            got.add(0, int(rows.addresses[k]), int(rows.lengths[k]))
        got.place(np.zeros(10, dtype=np.float32))
        self.assertFalse(got.complete())

    def test_bounds_cover_every_element_once(self):
        for length in (0, 1, 2, 3, 10, 101):
            for parts in (1, 2, 3, 7):
                covered = []
                for i in range(parts):
                    lo, hi = bounds(length, parts, i)
                    covered.extend(range(lo, hi))
                self.assertEqual(list(range(length)), covered)

    def test_groups_by_mean_magnitude(self):
        g = MagnitudeGroups((0.001, 0.0025), (0.5, 0.8, 1.0))
        means = np.array([0.0, 0.0009, 0.001, 0.002, 0.0025, 0.1, np.nan, np.inf])
        self.assertEqual([0, 0, 1, 1, 2, 2, 2, 2], g.assign(means).tolist())
        self.assertTrue(MagnitudeGroups.exact().is_exact)
        self.assertFalse(g.is_exact)

    def test_bad_groups_are_refused(self):
        for thresholds, msrs in [
            ((0.1,), (1.0,)),
            ((0.2, 0.1), (1, 1, 1)),
            ((0.1,), (0.0, 1.0)),
            ((-1,), (1, 1)),
        ]:
            with self.subTest(thresholds=thresholds, msrs=msrs), self.assertRaises(ValueError):
                MagnitudeGroups(thresholds, msrs)


if __name__ == "__main__":
    unittest.main()
