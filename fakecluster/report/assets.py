"""The report page's inline CSS and script: no CDN, no network, one file that opens anywhere.

The script does four things and nothing else: fold/expand rows, zoom the time axis (wheel, buttons, or a
failure link that jumps to its moment), redraw the axis ticks for the visible window, and show a tooltip
with the exact times and names stored in each shape's ``data-tip``. Every time-based SVG uses a viewBox in
virtual seconds with ``preserveAspectRatio="none"``, so zooming is a viewBox change, not a re-render.
"""

from __future__ import annotations

COLOURS = {
    "pending": "#c9ced6",
    "creating": "#f2c14e",
    "running": "#7fb3e6",
    "ready": "#2e8b57",
    "terminating": "#e08a4f",
    "succeeded": "#5a6b8c",
    "failed": "#c0392b",
    "active": "#9bb7d4",
    "suspended": "#b39ddb",
    "complete": "#5a6b8c",
    "listening": "#8e44ad",
    "connecting": "#e67e22",
    "connected": "#16a085",
    "working": "#27ae60",
    "gaveup": "#7f0000",
}
"""One colour per phase, Job state and program state; the legend is built from this table."""

CSS = """
body{font:13px/1.35 system-ui,sans-serif;margin:0;color:#222;background:#fff}
header{padding:10px 16px;border-bottom:1px solid #ddd}
h1{font-size:17px;margin:0 0 4px} h2{font-size:14px;margin:12px 0 6px}
.meta span{margin-right:14px;color:#555} .pass{color:#1e7b34;font-weight:600}
.fail{color:#b3261e;font-weight:600}
section{padding:4px 16px}
.failures li{margin:2px 0} .expect li{margin:1px 0}
.controls{position:sticky;top:0;background:#fff;z-index:3;padding:6px 16px;border-bottom:1px solid #eee}
.controls button{margin-right:4px}
.legend span{display:inline-block;margin-right:10px}
.legend i{display:inline-block;width:12px;height:10px;margin-right:3px;vertical-align:middle}
.timeline{position:relative;margin:0 16px 16px}
.row{display:flex;align-items:stretch;border-bottom:1px solid #f1f1f1}
.label{flex:0 0 260px;overflow:hidden;white-space:nowrap;text-overflow:ellipsis;padding:0 6px;
  font-size:12px;cursor:default}
.lane>.label,.job>.label{cursor:pointer;font-weight:600}
.lane>.label::before,.job.has-pods>.label::before{content:"\\25BE ";color:#888}
.lane.folded>.label::before,.job.folded>.label::before{content:"\\25B8 ";color:#888}
.pod>.label{padding-left:34px;color:#444;font-weight:400} .job>.label{padding-left:18px}
.track{flex:1 1 auto;position:relative;min-width:0}
svg.tl{display:block;width:100%;height:100%}
.lane{height:26px;background:#fafafa} .job{height:18px} .pod{height:14px}
.hidden{display:none}
#axis{height:22px;position:relative;margin-left:276px;margin-right:16px;font-size:11px;color:#555}
#axis div{position:absolute;top:4px;transform:translateX(-50%)}
#overlay{position:absolute;top:0;bottom:0;left:260px;right:0;pointer-events:none}
#overlay svg{width:100%;height:100%;display:block}
.marker{stroke-width:1;vector-effect:non-scaling-stroke;pointer-events:visibleStroke}
.marker.condition{stroke:#555;stroke-dasharray:3 3} .marker.action{stroke:#d35400}
.marker.milestone{stroke:#c2185b;stroke-width:2} .marker.flash{stroke:#ff0;stroke-width:4}
#markers li{display:inline-block;margin-right:12px} #markers a{color:inherit}
#tip{position:fixed;pointer-events:none;background:#222;color:#fff;padding:3px 6px;border-radius:3px;
  font-size:12px;white-space:pre;display:none;z-index:9}
table{border-collapse:collapse} td,th{padding:2px 8px;border-bottom:1px solid #eee;text-align:left}
td.num{text-align:right;font-variant-numeric:tabular-nums} code{font-size:11px}
.chart{margin:6px 0 14px}
"""

SCRIPT = """
(function(){
var root=document.getElementById('timeline'); if(!root) return;
var END=parseFloat(root.dataset.end)||1, view=[0,END];
var svgs=function(){return document.querySelectorAll('svg.tl');};
function apply(){
  var w=view[1]-view[0];
  svgs().forEach(function(s){s.setAttribute('viewBox',view[0]+' 0 '+w+' 1');});
  var axis=document.getElementById('axis'); axis.innerHTML='';
  var step=Math.pow(10,Math.floor(Math.log10(w/5)));
  if(w/step>10) step*=2; if(w/step>10) step*=2.5;
  for(var t=Math.ceil(view[0]/step)*step;t<=view[1]+1e-9;t+=step){
    var d=document.createElement('div'); d.style.left=(100*(t-view[0])/w)+'%';
    d.textContent=(+t.toFixed(6))+'s'; axis.appendChild(d);}
  document.getElementById('window').textContent=
    (+view[0].toFixed(3))+'s \\u2013 '+(+view[1].toFixed(3))+'s';
}
function zoom(f,c){var w=view[1]-view[0]; if(c===undefined) c=view[0]+w/2;
  var nw=Math.min(END,Math.max(w*f,END/100000)); var a=c-(c-view[0])*nw/w;
  a=Math.max(0,Math.min(a,END-nw)); view=[a,a+nw]; apply();}
window.fcZoom=zoom;
window.fcShow=function(t){var w=Math.max(END/20,1e-3); var a=Math.max(0,Math.min(t-w/2,END-w));
  view=[a,a+w]; apply();
  document.querySelectorAll('.marker[data-t="'+t+'"]').forEach(function(m){
    m.classList.add('flash'); setTimeout(function(){m.classList.remove('flash');},1500);});};
document.getElementById('zin').onclick=function(){zoom(0.5);};
document.getElementById('zout').onclick=function(){zoom(2);};
document.getElementById('zreset').onclick=function(){view=[0,END];apply();};
root.addEventListener('wheel',function(ev){if(!ev.ctrlKey&&!ev.shiftKey) return; ev.preventDefault();
  var tr=root.querySelector('.track').getBoundingClientRect();
  var c=view[0]+(view[1]-view[0])*(ev.clientX-tr.left)/tr.width; zoom(ev.deltaY<0?0.8:1.25,c);},
  {passive:false});
document.querySelectorAll('a.goto').forEach(function(a){a.addEventListener('click',function(ev){
  ev.preventDefault(); window.fcShow(parseFloat(a.dataset.t));});});
function refold(){var lanes={},jobs={};
  root.querySelectorAll('.row').forEach(function(r){var l=r.dataset.lane,j=r.dataset.job;
    if(r.classList.contains('lane')){lanes[l]=r.classList.contains('folded');return;}
    if(r.classList.contains('job')){jobs[l+'/'+j]=r.classList.contains('folded');
      r.classList.toggle('hidden',!!lanes[l]);return;}
    r.classList.toggle('hidden',!!lanes[l]||!!jobs[l+'/'+j]);});}
root.addEventListener('click',function(ev){var l=ev.target.closest('.label'); if(!l) return;
  var row=l.parentElement;
  if(row.classList.contains('lane')||row.classList.contains('has-pods')){
    row.classList.toggle('folded'); refold();}});
var tip=document.getElementById('tip');
document.addEventListener('mousemove',function(ev){var el=ev.target.closest&&ev.target.closest('[data-tip]');
  if(!el){tip.style.display='none';return;} tip.textContent=el.dataset.tip; tip.style.display='block';
  tip.style.left=(ev.clientX+12)+'px'; tip.style.top=(ev.clientY+12)+'px';});
refold(); apply();
})();
"""
