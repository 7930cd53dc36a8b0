"""What the evaluate and run resume tests share: the fake judges' calls counted, and cut (KeyboardInterrupt) at one."""

from __future__ import annotations

from vericite.fakes.judges import FourClassJudge, KeywordJudge, ThreeWayJudge


class Cut:
    """Counts the fake judges' calls (and the pairs they were given) from now on, in place of an earlier Cut;
    raises KeyboardInterrupt at call ``at``."""

    def __init__(self, monkeypatch, at=None):
        self.calls, self.pairs, self.at = 0, 0, at
        for cls in (KeywordJudge, FourClassJudge, ThreeWayJudge):
            monkeypatch.setattr(cls, "judge", self.wrap(getattr(cls.judge, "real", cls.judge)))  # a later Cut replaces it

    def wrap(self, real):
        def judge(judge_self, pairs):
            self.calls += 1
            if self.at is not None and self.calls == self.at:
                raise KeyboardInterrupt
            self.pairs += len(pairs)
            return real(judge_self, pairs)

        judge.real = real  # type: ignore[attr-defined]
        return judge
