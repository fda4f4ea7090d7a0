import io

from treebo._progress import ProgressBar


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_log_stream_gets_few_lines_and_the_final_state():
    stream = io.StringIO()
    with ProgressBar(100, "run", stream=stream, interval=3600) as bar:
        for i in range(100):
            bar.update(best=1.0 / (i + 1))
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2  # the first update and the last
    assert lines[-1].startswith("run [" + "#" * 30 + "] 100/100 best=0.01")


def test_terminal_redraws_in_place_and_close_finishes_the_line():
    stream = _Terminal()
    bar = ProgressBar(4, stream=stream, width=4)
    bar.update()
    bar.update(2, loss=0.5)
    bar.close()
    text = stream.getvalue()
    assert text.count("\r") == 3 and text.endswith("left)\n")
    assert "[###.] 3/4 loss=0.5" in text


def test_the_time_left_is_shown_until_the_end(monkeypatch):
    now = [0.0]
    monkeypatch.setattr("treebo._progress.time.perf_counter", lambda: now[0])
    stream = _Terminal()
    bar = ProgressBar(4, stream=stream, width=4)
    for seconds, steps in ((10.0, 1), (20.0, 1), (40.0, 2)):
        now[0] = seconds
        bar.update(steps)  # 1 of 4 after 10 s: 30 s left at that pace; then 20 s; then done
    lines = stream.getvalue().split("\r")[1:]
    assert lines[0].endswith("10.0s (about 30s left)")
    assert lines[1].endswith("20.0s (about 20s left)")
    assert lines[2].endswith("40.0s\n") and "left" not in lines[2]
