"""Run 4: extend host time with the launches kept for the previous call's counts (ElasticPrefill.last)
on and off, alternating in one process, 8 calls per batch (a model's layers), new counts per batch."""
import sys

import extend_host_gpu as t
from kimiops.kda.kernels import chunk

call = chunk.ElasticPrefill.__call__


def no_memo(self, *a):
    self.last = None
    return call(self, *a)


sys.argv = ["x", "--cases", *sys.argv[1:], "--layers", "8", "--ab", "2", "--ab-only", "--calls", "20"]
orig_ab = t.elastic_replay


class Mode:
    memo = True


def elastic_replay(on):  # "elastic replay" = memo on, "without it" = memo off (both elastic)
    import contextlib

    @contextlib.contextmanager
    def ctx():
        with orig_ab(True):
            chunk.ElasticPrefill.__call__ = call if on else no_memo
            try:
                yield
            finally:
                chunk.ElasticPrefill.__call__ = call
    return ctx()


t.elastic_replay = elastic_replay
print("modes: 'elastic replay' = previous call's launches kept; 'without it' = recomputed every call")
t.main()
