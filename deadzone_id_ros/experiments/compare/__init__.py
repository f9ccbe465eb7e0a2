"""The comparison experiment (``deadzone-id compare``): every inverse-dynamics method on the same split over several
seeds (Inami, Yamane, Sakaino, arXiv 2402.00393, Sec. IV, plus this project's baselines).

- :mod:`.run`: the experiment (split, plan every method with the one planner, train, evaluate, pick, export);
- :mod:`.results`: its typed results (report.json); :mod:`.report`: report.md, its written verdict
  :mod:`.verdict` and the number formatting every report shares :mod:`.formatting`; :mod:`.plots`: the figures;
- :mod:`.pick`, :mod:`.pick_cv`, :mod:`.pick_report`: the model to deploy, by validation or cross-validation;
- :mod:`.efficiency`: the data-efficiency curve; :mod:`.cell`: one comparison as a coarse cell (``--engine ray``,
  the sweep's cells).
"""

__all__ = ["cell", "efficiency", "formatting", "pick", "pick_cv", "pick_report", "plots", "report", "results", "run",
           "verdict"]
