// Injected by tests/test_render.sh into the HTML report of the decided H200 run: drives the
// results table's filter and sort as a user would and writes what it saw in <pre id="probe">.
(function(){
  var out=[];
  var q=document.getElementById('rq'), s=document.getElementById('rv');
  out.push('hidden=' + document.getElementById('rf').hidden);
  s.value='attention'; s.onchange();
  out.push('attention: ' + document.getElementById('rc').textContent);
  s.value=''; q.value='softmax/rows=4096'; q.oninput();
  out.push('text: ' + document.getElementById('rc').textContent);
  q.value=''; q.oninput();
  var h=document.getElementById('results').tHead.rows[0].cells[5]; h.onclick({type:'click'}); h.onclick({type:'click'});
  var rows=document.getElementById('results').tBodies[0].rows;
  out.push('change desc first: ' + rows[0].cells[0].textContent + ' ' + rows[0].cells[5].textContent + ' / last ' + rows[rows.length-1].cells[5].textContent + ' sort=' + h.getAttribute('aria-sort'));
  var p=document.createElement('pre'); p.id='probe'; p.textContent='PROBE '+out.join(' | '); document.body.appendChild(p);
})();
