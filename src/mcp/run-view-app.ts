/**
 * The HTML of the MCP Apps run view (run-view.ts): one self-contained page, no network, no CDN. It
 * speaks the View side of the MCP Apps postMessage protocol (ext-apps spec 2026-01-26) by hand:
 * `ui/initialize` to the host, `ui/notifications/initialized`, then it renders each
 * `ui/notifications/tool-result` (status, step timeline, screenshot, output) and reports its size
 * with `ui/notifications/size-changed`. The ext-apps SDK's own View bundle (`app-with-deps`) is about
 * 540 KB, most of a validation library, for the four messages this page uses (docs/architecture.md,
 * "Written by hand, and why"); tests drive it with the SDK's host side (AppBridge). Everything shown
 * is set with textContent (run data is never parsed as HTML).
 */

const STYLE = `
:root{color-scheme:light dark;--bg:#fff;--fg:#1b1f24;--mute:#5b6470;--line:#d9dee4;--ok:#1a7f37;--bad:#cf222e;--run:#9a6700;--card:#f6f8fa}
.dark{--bg:#0d1117;--fg:#e6edf3;--mute:#9198a1;--line:#30363d;--ok:#3fb950;--bad:#f85149;--run:#d29922;--card:#161b22}
@media (prefers-color-scheme:dark){:root:not(.light){--bg:#0d1117;--fg:#e6edf3;--mute:#9198a1;--line:#30363d;--ok:#3fb950;--bad:#f85149;--run:#d29922;--card:#161b22}}
*{box-sizing:border-box}
body{margin:0;padding:12px;font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;background:var(--bg);color:var(--fg)}
header{display:flex;flex-wrap:wrap;align-items:baseline;gap:8px;margin-bottom:8px}
h1{font-size:16px;margin:0;overflow-wrap:anywhere}
.badge{border-radius:999px;padding:1px 10px;font-size:12px;font-weight:600;border:1px solid currentColor}
.s-succeeded{color:var(--ok)}.s-failed,.s-canceled{color:var(--bad)}.s-running,.s-queued{color:var(--run)}.s-skipped{color:var(--mute)}
.id{color:var(--mute);font:12px ui-monospace,monospace;overflow-wrap:anywhere}
.grid{display:grid;gap:12px;grid-template-columns:1fr;align-items:start}
@media (min-width:720px){.grid.has-shot{grid-template-columns:minmax(0,2fr) minmax(0,3fr)}}
section{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:10px;min-width:0}
h2{font-size:12px;text-transform:uppercase;letter-spacing:.04em;color:var(--mute);margin:0 0 6px}
ol{list-style:none;margin:0;padding:0}
li{display:grid;grid-template-columns:18px 1fr auto;gap:6px;padding:4px 0;border-top:1px solid var(--line)}
li:first-child{border-top:0}
.mark{font-weight:700;text-align:center}
.step{overflow-wrap:anywhere}.tool{color:var(--mute);font-size:12px}
.dur{color:var(--mute);font-size:12px;white-space:nowrap}
.err{grid-column:2/4;color:var(--bad);font-size:12px;overflow-wrap:anywhere}
img{display:block;max-width:100%;height:auto;border:1px solid var(--line);border-radius:4px}
figcaption{color:var(--mute);font-size:12px;margin-top:4px}
pre{margin:0;white-space:pre-wrap;overflow-wrap:anywhere;font:12px/1.4 ui-monospace,monospace;max-height:320px;overflow:auto}
.error{color:var(--bad)}
.empty{color:var(--mute)}
`;

const SCRIPT = `
(function(){
  var nextId=1, pending={};
  function post(m){ window.parent.postMessage(m,'*'); }
  function request(method,params){ var id=nextId++; post({jsonrpc:'2.0',id:id,method:method,params:params}); return new Promise(function(res,rej){ pending[id]={res:res,rej:rej}; }); }
  function notify(method,params){ post({jsonrpc:'2.0',method:method,params:params||{}}); }
  function el(tag,cls,text){ var e=document.createElement(tag); if(cls) e.className=cls; if(text!==undefined) e.textContent=String(text); return e; }
  var MARK={succeeded:'\\u2713',failed:'\\u2717',skipped:'\\u2013',running:'\\u2026'};
  function theme(ctx){ if(!ctx||!ctx.theme) return; var r=document.documentElement; r.classList.toggle('dark',ctx.theme==='dark'); r.classList.toggle('light',ctx.theme==='light'); }
  function outputOf(result){
    if(result.structuredContent!==undefined&&result.structuredContent!==null) return JSON.stringify(result.structuredContent,null,2);
    var texts=(result.content||[]).filter(function(c){return c&&c.type==='text';}).map(function(c){return c.text;});
    return texts.length?texts.join('\\n'):null;
  }
  function render(result){
    var root=document.getElementById('app'); root.textContent='';
    var view=(result._meta||{})['flowctl/run_view'];
    var status=view?view.status:(result.isError?'failed':'succeeded');
    var head=el('header');
    head.appendChild(el('h1',null,view?view.flow:'Result'));
    var badge=el('span','badge s-'+status,status); badge.setAttribute('data-testid','status'); head.appendChild(badge);
    if(view) head.appendChild(el('span','id','run '+view.run_id));
    root.appendChild(head);
    var grid=el('div','grid'); root.appendChild(grid);
    var left=el('div'); left.style.display='grid'; left.style.gap='12px'; left.style.alignContent='start'; grid.appendChild(left);
    if(view){
      var st=el('section'); st.appendChild(el('h2',null,'Steps'));
      var ol=el('ol'); ol.setAttribute('data-testid','steps');
      if(view.steps.length===0) st.appendChild(el('div','empty',status==='queued'?'Queued: no step has run yet.':'No step ran.'));
      view.steps.forEach(function(s){
        var li=el('li','s-'+s.status); li.setAttribute('data-status',s.status);
        li.appendChild(el('span','mark',MARK[s.status]||'?'));
        var name=el('span','step',s.id); if(s.tool){ name.appendChild(document.createTextNode(' ')); name.appendChild(el('span','tool',s.tool)); } li.appendChild(name);
        li.appendChild(el('span','dur',typeof s.duration_ms==='number'?(s.duration_ms<1000?s.duration_ms+' ms':(s.duration_ms/1000).toFixed(1)+' s'):''));
        if(s.error) li.appendChild(el('span','err',s.error.code+': '+s.error.message));
        ol.appendChild(li);
      });
      st.appendChild(ol); left.appendChild(st);
    }
    var out=el('section'); var failed=!!result.isError;
    out.appendChild(el('h2',null,failed?'Error':'Output'));
    var text=view&&view.error?view.error.code+(view.error.step?' at step '+view.error.step:'')+': '+view.error.message:outputOf(result);
    var pre=el('pre',failed?'error':null,text===null?'(no output)':text); pre.setAttribute('data-testid','output'); out.appendChild(pre);
    left.appendChild(out);
    if(view&&view.screenshot){
      grid.classList.add('has-shot');
      var fig=el('section'); fig.appendChild(el('h2',null,'Last screenshot'));
      var f=el('figure'); f.style.margin='0';
      var img=el('img'); img.alt='Screenshot after step '+view.screenshot.step+' (secret fields blacked out)';
      img.setAttribute('data-testid','screenshot');
      img.src='data:'+view.screenshot.media_type+';base64,'+view.screenshot.data;
      img.addEventListener('load',size);
      f.appendChild(img); f.appendChild(el('figcaption',null,'After step '+view.screenshot.step+'. Secret fields are blacked out.'));
      fig.appendChild(f); grid.appendChild(fig);
    }
    document.body.setAttribute('data-rendered','true');
    size();
  }
  var last={w:0,h:0};
  function size(){ var w=Math.ceil(document.documentElement.scrollWidth), h=Math.ceil(document.documentElement.scrollHeight); if(w===last.w&&h===last.h) return; last={w:w,h:h}; notify('ui/notifications/size-changed',{width:w,height:h}); }
  window.addEventListener('message',function(ev){
    if(ev.source!==window.parent) return;
    var m=ev.data; if(!m||m.jsonrpc!=='2.0') return;
    if(m.id!==undefined&&!m.method){ var p=pending[m.id]; if(!p) return; delete pending[m.id]; if(m.error) p.rej(m.error); else p.res(m.result); return; }
    if(m.method==='ui/notifications/tool-result') render(m.params||{});
    else if(m.method==='ui/notifications/tool-input'){ var r=document.getElementById('app'); if(!document.body.hasAttribute('data-rendered')) r.textContent='Running\\u2026'; }
    else if(m.method==='ui/notifications/tool-cancelled'){ document.getElementById('app').textContent='The call was cancelled.'; size(); }
    else if(m.method==='ui/notifications/host-context-changed') theme(m.params);
    else if(m.method&&m.id!==undefined){
      if(m.method==='ui/resource-teardown'||m.method==='ping') post({jsonrpc:'2.0',id:m.id,result:{}});
      else post({jsonrpc:'2.0',id:m.id,error:{code:-32601,message:'Method not found: '+m.method}});
    }
  });
  if(window.ResizeObserver) new ResizeObserver(size).observe(document.body);
  request('ui/initialize',{appInfo:{name:'flowctl-run-view',version:'1.0.0'},appCapabilities:{},protocolVersion:'2026-01-26'}).then(function(r){
    theme(r&&r.hostContext); notify('ui/notifications/initialized',{}); size();
  },function(){ document.getElementById('app').textContent='This host did not accept the app.'; });
})();
`;

/** The run view page, served as `ui://flowctl/run-view.html` (`text/html;profile=mcp-app`). */
export const RUN_VIEW_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>flowctl run</title><style>${STYLE}</style></head>
<body><main id="app" aria-live="polite">Waiting for the result\u2026</main><script>${SCRIPT}</script></body></html>
`;
