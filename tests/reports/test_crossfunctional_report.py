"""The report's cross-functional section: the G table, per-scenario pass-rate tables and
BL-14's heat maps, from a crossfunctional.json in the run folder."""

from __future__ import annotations

from testaug.fixing.crossfunctional.analysis import (
    CROSSFUNCTIONAL_FILE,
    run_crossfunctional,
    write_report,
)
from testaug.reports.crossfunctional import TYPE_COLOURS
from testaug.reports.run_report import write_report as write_run_report
from tests.fixing.test_crossfunctional import IID, Learner, suite


def test_a_run_with_crossfunctional_json_gets_the_g_table_and_a_heat_map_per_scenario(tmp_path):
    learner = Learner()
    report = run_crossfunctional(
        suite(),
        iid_train=IID,
        iid_test=IID,
        pairs=[("IID->T", "vanilla"), ("IID+T", "vanilla")],
        train=learner.train,
        predict=learner.predict,
        seeds=(1, 2),
        base_model="constructed",
    )
    write_report(tmp_path / CROSSFUNCTIONAL_FILE, report)
    written = write_run_report(tmp_path)
    assert "Cross-functional generalization" in written.sections
    markdown = written.markdown.read_text()
    # G of IID->T seen: s_T = 1, s_iid = 3/4 -> 85.7; no deviation over two seeds; the six
    # test cases it gets right and the baseline wrong give p = 2 / 2^6 < 0.05: marked above
    assert "| IID->T / vanilla | 75.0 ± 0.0 |  | 85.7 ± 0.0 ▲ | 66.7 ± 0.0 |" in markdown
    assert "| IID (standard) | 75.0 ± 0.0 | 66.7 ± 0.0 |" in markdown
    for scenario in ("seen", "func", "class", "type"):
        png = tmp_path / "report_files" / f"crossfunctional_{scenario}.png"
        assert png.read_bytes()[:4] == b"\x89PNG"
    assert "Pass rates: functionality out" in markdown
    assert set(TYPE_COLOURS) == {"MFT", "INV", "DIR"}


def test_the_heat_map_colours_x_ticks_by_test_type():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from testaug.reports import crossfunctional as section

    learner = Learner()
    report = run_crossfunctional(
        suite(),
        iid_train=IID,
        iid_test=IID,
        pairs=[("IID->T", "vanilla")],
        train=learner.train,
        predict=learner.predict,
        scenarios=("func",),
    )
    captured = {}
    png = section._png

    def keep(figure):
        captured["ticks"] = [
            (t.get_text(), t.get_color()) for t in figure.axes[0].get_xticklabels()
        ]
        return png(figure)

    section._png = keep
    try:
        functionalities = section._ordered(report)
        section.pass_rate_heatmap_png(functionalities, section._rows(report, "func"))
    finally:
        section._png = png
        plt.close("all")
    colours = dict(captured["ticks"][1:])
    by_type = {f.description: f.test_type for f in functionalities}
    assert {name: TYPE_COLOURS[by_type[name]] for name in colours} == colours


def test_pairs_significantly_above_the_baseline_are_green_and_below_red(tmp_path):
    from testaug.fixing.crossfunctional.analysis import TrainingSetting
    from testaug.reports.crossfunctional import TONES
    from tests.fixing.test_crossfunctional_significance import (
        IID_MANY,
        MethodLearner,
        big_suite,
    )

    learner = MethodLearner()
    report = run_crossfunctional(
        big_suite(),
        iid_train=IID_MANY,
        iid_test=IID_MANY,
        pairs=[("IID->T", "vanilla"), ("IID", "vanilla"), ("IID->T", "forget")],
        train=learner.train,
        predict=learner.predict,
        scenarios=("seen",),
        grid=[TrainingSetting(learning_rate=1e-3, epochs=1, batch_size=16)],
        significance_trials=500,
    )
    write_report(tmp_path / CROSSFUNCTIONAL_FILE, report)
    written = write_run_report(tmp_path)
    markdown = written.markdown.read_text()
    html = written.html.read_text()
    # the G table marks the better pair ▲ and the worse ▼; the baseline model itself neither
    assert "| IID->T / vanilla | 100.0 ± 0.0 |  | 100.0 ± 0.0 ▲ |" in markdown
    assert "| IID / vanilla | 100.0 ± 0.0 |  | 75.0 ± 0.0 |" in markdown
    assert "| IID->T / forget | 50.0 ± 0.0 ▼ |  | 44.4 ± 0.0 ▼ |" in markdown
    # the significance table's rows: green above, red below, plain otherwise
    assert f'<tr style="color: {TONES["above"]}; font-weight: bold"><td>IID-&gt;T / vanilla' in html
    assert f'<tr style="color: {TONES["below"]}; font-weight: bold"><td>IID-&gt;T / forget' in html
    assert "<tr><td>IID / vanilla</td><td>G seen</td><td>+0.0</td><td>1.0000</td>" in html
    # and in the G table, the marked cells alone (BeLUGA's Table 3)
    green, red = (f'<td style="color: {TONES[k]}; font-weight: bold">' for k in ("above", "below"))
    assert (
        f"<td>IID-&gt;T / vanilla</td><td>100.0 ± 0.0</td><td></td>{green}100.0 ± 0.0 ▲</td>"
        in html
    )
    assert (
        f"<td>IID-&gt;T / forget</td>{red}50.0 ± 0.0 ▼</td><td></td>{red}44.4 ± 0.0 ▼</td>" in html
    )
    # the settings chosen on T_val
    assert "T_val suite score" in markdown and "lr 0.001, 1 epochs, batch 16" in markdown


# Functionality names as long as real suites' descriptions (BeLUGA's run to ~90 characters).
LONG_NAMES = {
    "pos": "Single positive words in a neutral airline template are positive",
    "neg": "Single negative words in a neutral airline template are negative",
    "not-pos": "Negated positive verbs and adjectives in short sentences should be negative",
    "not-neg": "Negated negative words should not be predicted negative (DIR, any label)",
    "typo": "A typo in the sentiment word leaves the label alone (INV)",
}


def test_the_heat_map_shows_every_functionality_name_whole_inside_the_figure(monkeypatch):
    import warnings

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from testaug.reports import crossfunctional as section

    cases = [c.model_copy(update={"description": LONG_NAMES[c.description_id]}) for c in suite()]
    learner = Learner()
    report = run_crossfunctional(
        cases,
        iid_train=IID,
        iid_test=IID,
        pairs=[("IID->T", "vanilla"), ("IID->(IID+T)", "vanilla")],
        train=learner.train,
        predict=learner.predict,
        scenarios=("func",),
    )
    figures = []
    monkeypatch.setattr(section, "_png", lambda figure: figures.append(figure) or b"")
    functionalities = section._ordered(report)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no "layout not applied": the layout must fit
            section.pass_rate_heatmap_png(functionalities, section._rows(report, "func"))
            (figure,) = figures
            figure.canvas.draw()  # lays the figure out as saving it does
        ticks = figure.axes[0].get_xticklabels()
        assert [" ".join(t.get_text().split()) for t in ticks] == [
            "average",
            *(f.description for f in functionalities),
        ]
        box = figure.bbox
        for tick in ticks:
            extent = tick.get_window_extent()
            assert box.x0 <= extent.x0 and extent.x1 <= box.x1, tick.get_text()
            assert box.y0 <= extent.y0 and extent.y1 <= box.y1, tick.get_text()
    finally:
        plt.close("all")


def test_the_significance_caption_states_the_trials_the_run_used():
    from testaug.reports.crossfunctional import significance_blocks

    learner = Learner()
    report = run_crossfunctional(
        suite(),
        iid_train=IID,
        iid_test=IID,
        pairs=[("IID->T", "vanilla")],
        train=learner.train,
        predict=learner.predict,
        scenarios=("seen",),
        significance_trials=1_000,
    )
    (table,) = significance_blocks(report)
    assert "1,000 trials" in table.caption
    assert "10,000" not in table.caption
