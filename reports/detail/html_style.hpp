#pragma once
// The stylesheet shared by report.html and compare.html (internal to bootstorm::reports).
#include <string_view>

namespace bootstorm::reports::detail {

inline constexpr std::string_view kHtmlStyle = R"css(
:root { --ink: #111827; --muted: #4b5563; --line: #e5e7eb; --bg: #f8fafc; --card: #ffffff;
        --accent: #0072B2; --good: #047857; --bad: #B91C1C; --warn-bg: #fff7ed; --warn: #9a3412; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--ink);
       font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1200px; margin: 0 auto; padding: 24px 28px 48px; }
header.top { border-bottom: 3px solid var(--accent); padding-bottom: 12px; margin-bottom: 20px; }
h1 { font-size: 28px; line-height: 1.2; margin: 0 0 6px; }
h2 { font-size: 21px; margin: 36px 0 12px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
h3 { font-size: 17px; margin: 24px 0 8px; }
.meta { color: var(--muted); margin: 0; }
.meta span { margin-right: 18px; white-space: nowrap; }
.banner { background: var(--warn-bg); color: var(--warn); border: 2px solid #fdba74; border-radius: 8px;
          padding: 12px 16px; margin: 0 0 20px; font-size: 16px; }
.banner strong { text-transform: uppercase; letter-spacing: 0.06em; }
.verdict { background: var(--card); border-left: 6px solid var(--accent); border-radius: 6px; padding: 12px 16px;
           margin: 0 0 10px; font-size: 18px; font-weight: 600; box-shadow: 0 1px 2px rgba(0,0,0,0.06); }
.verdict small { display: block; font-size: 13px; font-weight: 400; color: var(--muted); margin-top: 2px; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(250px, 1fr)); gap: 14px; margin: 8px 0; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 14px 16px;
        border-top: 5px solid var(--series, var(--accent)); }
.card h3 { margin: 0 0 6px; font-size: 16px; }
.card .big { font-size: 30px; font-weight: 700; line-height: 1.1; }
.card .big small { font-size: 14px; font-weight: 400; color: var(--muted); }
.card dl { display: grid; grid-template-columns: auto auto; gap: 2px 12px; margin: 10px 0 0; font-size: 14px; }
.card dt { color: var(--muted); }
.card dd { margin: 0; text-align: right; font-variant-numeric: tabular-nums; }
figure { background: var(--card); border: 1px solid var(--line); border-radius: 10px; margin: 14px 0; padding: 10px; }
figcaption { color: var(--muted); font-size: 13px; padding: 4px 6px 0; }
svg.chart { width: 100%; height: auto; display: block; }
table { border-collapse: collapse; width: 100%; background: var(--card); margin: 8px 0 14px; font-size: 13.5px; }
th, td { border-bottom: 1px solid var(--line); padding: 5px 8px; text-align: left; vertical-align: top; }
th { background: #f1f5f9; font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.num { white-space: nowrap; }
th[scope="row"] { white-space: nowrap; }
td small { color: var(--muted); }
td small.down { color: var(--good); }
td small.up { color: var(--bad); }
.pass { color: var(--good); font-weight: 700; }
.fail { color: var(--bad); font-weight: 700; }
.swatch { display: inline-block; width: 11px; height: 11px; border-radius: 2px; margin-right: 6px;
          vertical-align: -1px; }
pre { background: #0f172a; color: #e2e8f0; padding: 14px; border-radius: 8px; overflow-x: auto; font-size: 13px; }
.scroll { overflow-x: auto; }
footer { color: var(--muted); font-size: 13px; margin-top: 40px; border-top: 1px solid var(--line); padding-top: 10px; }
@media print {
  body { background: #fff; font-size: 11pt; }
  main { max-width: none; padding: 0; }
  .card, figure, .verdict { box-shadow: none; break-inside: avoid; }
  figure, table { break-inside: avoid; }
  h2 { break-after: avoid; }
  pre { background: #fff; color: #000; border: 1px solid #999; white-space: pre-wrap; }
  .banner { border-width: 3px; }
}
)css";

}  // namespace bootstorm::reports::detail
