"""Segment encoding, validation of what arrives, chunk bounds and magnitude groups."""

import unittest

import numpy as np
from netapprox_torch.segments import HEADER_BYTES, MagnitudeGroups, SegmentError, bounds, decode, encode


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
