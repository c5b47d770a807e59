"""Every honesty helper, with a test that fails when it lies."""

import os
import tempfile
import unittest

from helpers import Fixed  # noqa: F401  (sets sys.path)

from contextgraph_provider import (
    ProvenanceError, audit_answer, content_digest, count_lines, file_excerpt, file_uri_to_path,
    filter_as_of, format_timestamp, frame, pack, parse_query, parse_timestamp, path_to_file_uri,
    read_range, sha256_digest, token_cost, verdict_by_digest,
)


def q(**kw):
    body = {"goal": "g", "max_frames": 10, "max_tokens": 1000}
    body.update(kw)
    return parse_query(body)


class TokenCost(unittest.TestCase):
    def test_b3_counts_utf8_bytes_rounded_up(self):
        self.assertEqual(token_cost(None), 0)
        self.assertEqual(token_cost(""), 0)
        self.assertEqual(token_cost("abcd"), 1)
        self.assertEqual(token_cost("abcde"), 2)
        # 'é' is 2 bytes, '€' 3, '😀' 4: characters would undercount.
        self.assertEqual(token_cost("é"), 1)
        self.assertEqual(token_cost("ééé"), 2)
        self.assertEqual(token_cost("€€€"), 3)
        self.assertEqual(token_cost("😀😀"), 2)

    def test_frame_cost_and_digest_describe_the_content(self):
        f = frame("x", "doc", "T", "max_attempts bounds the tries")
        self.assertEqual(f["token_cost"], 8)  # 29 bytes, as in the Rust SDK's doc test
        self.assertEqual(f["content_digest"], sha256_digest("max_attempts bounds the tries".encode()))
        self.assertEqual(f["citation_label"], "T")
        self.assertEqual(audit_answer(q(), {"frames": [f], "truncated": False}), [])

    def test_the_guard_catches_a_lying_cost(self):
        f = frame("x", "doc", "T", "12345678")
        f["token_cost"] = 1
        anchors = [v.anchor for v in audit_answer(q(), {"frames": [f], "truncated": False})]
        self.assertEqual(anchors, ["B3"])

    def test_the_guard_catches_a_lying_digest(self):
        f = frame("x", "doc", "T", "body")
        f["content"] = "body, edited after the digest was taken"
        f["token_cost"] = token_cost(f["content"])
        anchors = [v.anchor for v in audit_answer(q(), {"frames": [f], "truncated": False})]
        self.assertEqual(anchors, ["D1"])
        f["content_digest"] = "sha256:ABC"
        self.assertEqual([v.anchor for v in audit_answer(q(), {"frames": [f], "truncated": False})], ["D1"])

    def test_digest_is_of_the_exact_bytes(self):
        import hashlib

        self.assertEqual(content_digest("é"), "sha256:" + hashlib.sha256(b"\xc3\xa9").hexdigest())
        self.assertNotEqual(content_digest("a\n"), content_digest("a\r\n"))

    def test_score_is_clamped_and_nan_is_zero(self):
        self.assertEqual(frame("x", "doc", "T", "c", score=3)["score"], 1.0)
        self.assertEqual(frame("x", "doc", "T", "c", score=float("nan"))["score"], 0.0)


class Provenance(unittest.TestCase):
    DATA = b"one\r\ntwo\nthree"

    def test_ranges_address_exact_lines_terminators_included(self):
        self.assertEqual(read_range(self.DATA, 1, 1), b"one\r\n")
        self.assertEqual(read_range(self.DATA, 2, 3), b"two\nthree")
        self.assertIsNone(read_range(self.DATA, 3, 4))
        self.assertEqual(count_lines(self.DATA), 3)
        self.assertEqual(count_lines(b"a\n"), 1)
        self.assertIsNone(read_range(b"a\n", 2, 2))
        # Adjacent ranges concatenate back to the file.
        self.assertEqual(read_range(self.DATA, 1, 1) + read_range(self.DATA, 2, 3), self.DATA)

    def test_excerpt_digest_covers_exactly_the_range(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "my notes.md")
            with open(path, "wb") as f:
                f.write(self.DATA)
            ex = file_excerpt(path, self.DATA, 2, 3, method="file-read", by="t")
            p = ex.provenance
            self.assertEqual(p["type"], "file")
            self.assertEqual(p["range"], "L2-3")
            self.assertEqual(p["digest"], sha256_digest(b"two\nthree"))
            self.assertTrue(p["uri"].startswith("file:///") and "my%20notes.md" in p["uri"])
            self.assertEqual(file_uri_to_path(p["uri"]), os.path.abspath(path))
            with open(file_uri_to_path(p["uri"]), "rb") as f:
                self.assertEqual(sha256_digest(read_range(f.read(), 2, 3)), p["digest"])
            fr = ex.frame("id", "doc", "Title")
            self.assertEqual(fr["content"], "two\nthree")
            self.assertEqual(fr["citation_label"], "my notes.md L2-3")
            self.assertEqual(fr["uri"], p["uri"])

    def test_a_range_past_the_end_is_refused_not_shortened(self):
        with self.assertRaises(ProvenanceError):
            file_excerpt("/tmp/x.md", self.DATA, 2, 9)
        with self.assertRaises(ProvenanceError):
            file_excerpt("/tmp/x.md", self.DATA, 0, 1)

    def test_non_utf8_bytes_cannot_become_content(self):
        ex = file_excerpt("/tmp/x.bin", b"\xff\xfe\n", 1, 1)
        with self.assertRaises(ProvenanceError):
            ex.frame("id", "doc", "T")

    def test_uris_round_trip_and_refuse_remote_hosts(self):
        self.assertEqual(path_to_file_uri("/a b/c#d.md"), "file:///a%20b/c%23d.md")
        self.assertEqual(file_uri_to_path("file:///a%20b/c%23d.md"), "/a b/c#d.md")
        self.assertEqual(file_uri_to_path("file://localhost/x"), "/x")
        with self.assertRaises(ProvenanceError):
            file_uri_to_path("file://example.org/x")


class Packing(unittest.TestCase):
    def frames(self):
        return Fixed().frames

    def test_truncation_is_truthful_and_budget_honoured(self):
        frames = self.frames()  # costs 15, 1, 60
        r = pack(frames, q(max_tokens=20))
        self.assertEqual([f["id"] for f in r["frames"]], ["a", "b"])
        self.assertTrue(r["truncated"])
        self.assertEqual(r["dropped_estimate"], 1)
        self.assertEqual(audit_answer(q(max_tokens=20), r), [])
        r = pack(frames, q(max_frames=1))
        self.assertEqual(len(r["frames"]), 1)
        self.assertEqual(r["dropped_estimate"], 2)
        r = pack(frames, q())
        self.assertFalse(r["truncated"])
        self.assertNotIn("dropped_estimate", r)
        r = pack(frames, q(max_tokens=0))
        self.assertEqual((r["frames"], r["truncated"], r["dropped_estimate"]), ([], True, 3))

    def test_the_guard_catches_a_lying_truncated_flag_and_budgets(self):
        frames = self.frames()
        self.assertIn("truncated", [v.anchor for v in audit_answer(q(), {"frames": [], "truncated": False, "dropped_estimate": 2})])
        self.assertIn("B1", [v.anchor for v in audit_answer(q(max_tokens=10), {"frames": frames, "truncated": False})])
        self.assertIn("B4", [v.anchor for v in audit_answer(q(max_frames=2), {"frames": frames, "truncated": False})])
        self.assertIn("Q1", [v.anchor for v in audit_answer(q(kinds=["fact"]), {"frames": frames, "truncated": False})])
        self.assertIn("as_of", [v.anchor for v in audit_answer(q(as_of="2026-01-15T00:00:00Z"), {"frames": frames, "truncated": False})])
        self.assertIn("D2", [v.anchor for v in audit_answer(q(), {"frames": [frames[0], frames[0]], "truncated": False})])

    def test_kinds_filter(self):
        r = pack(self.frames(), q(kinds=["fact"]))
        self.assertEqual([f["kind"] for f in r["frames"]], ["fact"])
        self.assertFalse(r["truncated"])  # filtered frames are not "dropped"

    def test_as_of_compares_instants_not_strings(self):
        frames = self.frames()
        # "...:00Z" sorts after "...:00.5Z" as text; as instants it is earlier.
        kept = filter_as_of(frames, q(as_of="2026-02-01T00:00:00Z"))
        self.assertEqual(sorted(f["id"] for f in kept), ["a", "c"])
        kept = filter_as_of(frames, q(as_of="2026-02-01T00:00:00.5Z"))
        self.assertEqual(sorted(f["id"] for f in kept), ["a", "b", "c"])

    def test_ranking_is_deterministic(self):
        frames = self.frames()
        a = pack(list(frames), q())
        b = pack(list(reversed(frames)), q())
        self.assertEqual([f["id"] for f in a["frames"]], ["a", "c", "b"])
        self.assertEqual(a, b)


class Timestamps(unittest.TestCase):
    def test_f4_exact_form_and_real_dates(self):
        self.assertIsNotNone(parse_timestamp("2024-02-29T23:59:59Z"))
        for bad in ("2023-02-29T00:00:00Z", "2026-01-01t00:00:00Z", "2026-01-01T00:00:00+00:00", "2026-01-01T24:00:00Z", "2026-1-01T00:00:00Z", "2026-01-01T00:00:00.Z"):
            self.assertIsNone(parse_timestamp(bad), bad)
        self.assertEqual(format_timestamp(0), "1970-01-01T00:00:00Z")
        self.assertEqual(parse_timestamp(format_timestamp(1700000000.25)), (1700000000, 250000000))


class Verdicts(unittest.TestCase):
    def test_valid_only_for_the_digest_served_now(self):
        ident = {"provider_id": "any-label", "frame_id": "f", "content_digest": sha256_digest(b"x")}
        self.assertEqual(verdict_by_digest(ident, sha256_digest(b"x"))["status"], "valid")
        stale = verdict_by_digest(ident, sha256_digest(b"y"))
        self.assertEqual((stale["status"], stale["replacement_digest"]), ("stale", sha256_digest(b"y")))
        self.assertEqual(verdict_by_digest(ident, None, served=False)["status"], "gone")
        self.assertEqual(verdict_by_digest(ident, None)["status"], "unknown")
        self.assertEqual(verdict_by_digest(dict(ident, content_digest=None), sha256_digest(b"x"))["status"], "unknown")
        # provider_id is the host's label, echoed unchanged.
        self.assertEqual(stale["frame"]["provider_id"], "any-label")


if __name__ == "__main__":
    unittest.main()
