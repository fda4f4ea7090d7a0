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
    assert text.count("\r") == 3 and text.endswith("s\n")
    assert "[###.] 3/4 loss=0.5" in text
