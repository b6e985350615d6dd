"""The charts `colint report` draws: name -> title, in the HTML report's order.

The one list of chart names: report_html draws these, and the CLI's --chart offers them without
importing report_html (whose drawing needs matplotlib) at start-up.
"""

CHARTS = {"roofline": "Roofline", "time": "Step time breakdown", "pipeline": "Pipeline-stage balance",
          "frontier": "Throughput-interactivity frontier"}
