"""The charts `colint report` draws: name -> title, in the HTML report's order.

The one list of chart names: html_report draws these, and the CLI's --chart offers them without
importing html_report (whose drawing needs matplotlib) at start-up.
"""

CHARTS = {
    "roofline": "Roofline",
    "time": "Step time breakdown",
    "pipeline": "Pipeline-stage balance",
    "frontier": "Throughput-interactivity frontier",
}
