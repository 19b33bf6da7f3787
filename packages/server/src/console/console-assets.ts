/**
 * The console's stylesheet, served from the package at `/console/console.css` (the pages carry no
 * inline style or script: their CSP allows the stylesheet from 'self' and nothing else).
 */

/** The stylesheet's text. */
export const CONSOLE_CSS = `
:root{color-scheme:light}
body{font:15px/1.5 system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
.skip{position:absolute;left:-10000px;top:.5rem;background:#fff;color:#1d2330;padding:.25rem .75rem;border-radius:4px}
.skip:focus{left:1rem;z-index:1}
main:focus{outline:none}
header{background:#1d2330;color:#fff;padding:.5rem 1.5rem}
header nav{display:flex;flex-wrap:wrap;gap:1rem;align-items:center}
header a{color:#fff}header a[aria-current=page]{font-weight:700;text-decoration-thickness:3px}
header form{margin:0 0 0 auto}
main{max-width:80rem;margin:1.5rem auto;background:#fff;border:1px solid #d9dde5;border-radius:8px;padding:1.25rem 2rem}
h1{font-size:1.4rem;margin:0 0 .5rem}h2{font-size:1.1rem;margin:1.5rem 0 .5rem}
code,pre{font:13px/1.45 ui-monospace,monospace}
pre{background:#f1f3f6;padding:.75rem;border-radius:6px;white-space:pre-wrap;word-break:break-word}
a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible{outline:3px solid #2563eb;outline-offset:2px}
table{border-collapse:collapse;width:100%;font-size:.9rem}
th,td{text-align:left;padding:.3rem .5rem;border-bottom:1px solid #e5e7eb;vertical-align:top}
th{background:#f1f3f6}
tr.refused td{background:#fef2f2}
.filters{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:flex-end;margin-bottom:1rem}
.filters label{display:flex;flex-direction:column;font-size:.85rem;color:#5a6375}
input,select,button{font:inherit;padding:.3rem .5rem;border:1px solid #9aa3b2;border-radius:4px}
button{cursor:pointer;background:#fff}
button.danger{background:#991b1b;color:#fff;border-color:#991b1b}
.note{color:#5a6375;font-size:.9rem}
.error{padding:.75rem;border-radius:6px;background:#fef2f2}
.status{padding:.75rem;border-radius:6px;background:#eef2ff}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem}dt{color:#5a6375}dd{margin:0}
ol.story li{margin-bottom:.5rem}
.chart{width:100%;max-width:48rem;height:auto;display:block}
.chart .calls{fill:#93c5fd}.chart .refusals{fill:#dc2626}.chart .axis{stroke:#9aa3b2}.chart text{font:11px system-ui,sans-serif;fill:#5a6375}
.legend{display:flex;gap:1rem;font-size:.85rem}.legend .swatch-calls{color:#2563eb}.legend .swatch-refusals{color:#dc2626}
.actions{display:flex;gap:1rem;align-items:center;margin-top:1rem}.actions form{margin:0}
td form{margin:0}
`;
