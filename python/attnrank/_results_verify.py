"""Result records of :func:`attnrank.verify` (``attnrank verify --json``),
made from the library's schema (attnrank._results.records).

Built from the library's JSON of the report (ar_verify_report_json), so the
field names and their order are the CLI's keys; ``to_dict()`` equals the
CLI's ``--json`` output for the same suite, seed and size (with
``timings=True`` each check also carries its ``seconds``, which differ from
run to run)."""

from attnrank._results import records

class _VerifyReport:
    def __bool__(self) -> bool:
        return self.failed == 0


__all__ = records(globals(), "verify", {"VerifyReport": _VerifyReport})
