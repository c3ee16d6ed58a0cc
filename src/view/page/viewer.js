// The splatc viewer's page. The server renders every frame on the GPU; this page only keeps the
// camera, asks for frames (a JSON request over the WebSocket, at most one in flight), shows the
// frames it gets back (JPEG strips, put together), draws the training cameras over them, and shows training's numbers.
// Cameras follow splatc's convention: R and T map world to camera, x right, y down, z forward.
'use strict';

const $ = (id) => document.getElementById(id);

// ------------------------------------------------------------------ small vector algebra

const dot = (a, b) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
const add = (a, b) => [a[0] + b[0], a[1] + b[1], a[2] + b[2]];
const sub = (a, b) => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
const scale = (a, s) => [a[0] * s, a[1] * s, a[2] * s];
const cross = (a, b) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
const norm = (a) => { const n = Math.hypot(a[0], a[1], a[2]); return n > 0 ? scale(a, 1 / n) : a; };
const row = (R, i) => [R[3 * i], R[3 * i + 1], R[3 * i + 2]];

// Rotation by `angle` about the unit axis `k` (Rodrigues), row-major.
function rotation(k, angle) {
  const c = Math.cos(angle), s = Math.sin(angle), t = 1 - c;
  const [x, y, z] = k;
  return [t * x * x + c, t * x * y - s * z, t * x * z + s * y,
          t * x * y + s * z, t * y * y + c, t * y * z - s * x,
          t * x * z - s * y, t * y * z + s * x, t * z * z + c];
}
const apply = (M, v) => [dot(row(M, 0), v), dot(row(M, 1), v), dot(row(M, 2), v)];

// The world-to-camera rotation looking along `forward` with `up` up (camera y points down).
function lookRotation(forward, up) {
  const z = norm(forward);
  let y = sub(scale(up, -1), scale(z, dot(scale(up, -1), z)));
  if (Math.hypot(...y) < 1e-6) y = Math.abs(z[0]) < 0.9 ? [1, 0, 0] : [0, 1, 0];
  y = norm(sub(y, scale(z, dot(y, z))));
  const x = cross(y, z);
  return [...x, ...y, ...z];
}

// ------------------------------------------------------------------ state

const state = {
  ws: null,
  hello: null,           // what the server said first: mode, cameras, frame of reference, limits
  stats: null,
  history: [],
  // the view: world-to-camera rotation, camera centre, orbit target, intrinsics (null: the window's)
  R: [1, 0, 0, 0, 1, 0, 0, 0, 1],
  p: [0, 0, -3],
  target: [0, 0, 0],
  intr: null,
  fovY: 50 * Math.PI / 180,
  camera: -1,            // the dataset camera jumped to, -1 none
  exactT: null,          // its T as given, until the view moves (-R p loses the last bits)
  nextId: 1,
  inflight: null,        // {id, sent, cam}
  sentCams: new Map(),   // id -> camera of that request (to draw the frustums over its frame)
  lastSent: 0,
  dirty: true,
  keys: new Set(),
  pointers: new Map(),
  frames: 0,
  rejected: 0,           // frame messages refused (malformed, undecodable)
  last: null,            // the last frame shown: {id, step, w, h, renderMs, gaussians, strips, latencyMs, bitmap}
};

// Hooks for tests and scripts: the last frame's pixels, and a wait for the next frames.
window.splatc = {
  state,
  get frames() { return state.frames; },
  get rejected() { return state.rejected; },
  // a binary message handed to the page as if the server had sent it: resolves true once shown
  receive(data) { return onFrame(data, performance.now()); },
  get last() { return state.last && { ...state.last, bitmap: undefined }; },
  get lastSentId() { return state.nextId - 1; },
  get stats() { return state.stats; },
  // the camera a request asked for (the last 16): {w, h, fx, fy, cx, cy, R, T}
  cameraOf(id) { return state.sentCams.get(id) || null; },
  get hello() { return state.hello; },
  // resolves with the last frame once one answers a request sent with an id >= `id`
  waitFrame(id, timeoutMs = 30000) {
    return new Promise((resolve, reject) => {
      const t0 = performance.now();
      const check = () => {
        if (state.last && state.last.id >= id) resolve(window.splatc.last);
        else if (performance.now() - t0 > timeoutMs) reject(new Error('no frame for request ' + id));
        else setTimeout(check, 20);
      };
      check();
    });
  },
  // resolves with the last frame once the view has stopped changing and a frame shows it
  settled(timeoutMs = 30000) {
    return new Promise((resolve, reject) => {
      const t0 = performance.now();
      const check = () => {
        if (!state.dirty && !state.inflight && !state.keys.size && state.last && state.last.id === state.nextId - 1)
          resolve(window.splatc.last);
        else if (performance.now() - t0 > timeoutMs) reject(new Error('the view did not settle'));
        else setTimeout(check, 20);
      };
      check();
    });
  },
  // the last frame as decoded by the browser: base64 of its RGBA bytes
  pixels() {
    const b = state.last && state.last.bitmap;
    if (!b) return null;
    const c = document.createElement('canvas');
    c.width = b.width;
    c.height = b.height;
    const g = c.getContext('2d', { willReadFrequently: true });
    g.drawImage(b, 0, 0);
    const data = g.getImageData(0, 0, b.width, b.height).data;
    let s = '';
    for (let i = 0; i < data.length; i += 0x8000) s += String.fromCharCode.apply(null, data.subarray(i, i + 0x8000));
    return btoa(s);
  },
};

// ------------------------------------------------------------------ the camera

const center = () => (state.hello ? state.hello.center : [0, 0, 0]);
const radius = () => (state.hello && state.hello.radius > 0 ? state.hello.radius : 1);
const up = () => (state.hello ? norm(state.hello.up) : [0, -1, 0]);
const forward = () => row(state.R, 2);

function lookAt(eye, target) {
  state.exactT = null;
  state.p = eye;
  state.target = target;
  state.R = lookRotation(sub(target, eye), up());
  state.dirty = true;
}

function jumpTo(k) {
  const cams = state.hello ? state.hello.cameras : [];
  if (k < 0 || k >= cams.length) {
    state.camera = -1;
    state.intr = null;
    $('camera').value = '-1';
    state.dirty = true;
    return;
  }
  const c = cams[k];
  state.camera = k;
  state.R = c.R.slice();
  state.exactT = c.T.slice();
  // the centre: -R^T T
  state.p = [0, 1, 2].map((i) => -(c.R[i] * c.T[0] + c.R[3 + i] * c.T[1] + c.R[6 + i] * c.T[2]));
  const d = Math.max(0.2 * radius(), dot(sub(center(), state.p), forward()));
  state.target = add(state.p, scale(forward(), d));
  state.intr = { w: c.w, h: c.h, fx: c.fx, fy: c.fy, cx: c.cx, cy: c.cy };
  $('camera').value = String(k);
  state.dirty = true;
}

// Rotates the view by M about `pivot` (the orbit target, or the camera itself).
function rotateView(M, pivot) {
  state.exactT = null;
  state.p = add(pivot, apply(M, sub(state.p, pivot)));
  state.target = add(pivot, apply(M, sub(state.target, pivot)));
  // the camera's axes (rows of R) turn with it: R' = R M^T
  const x = apply(M, row(state.R, 0)), y = apply(M, row(state.R, 1)), z = apply(M, row(state.R, 2));
  state.R = [...x, ...y, ...z];
  state.dirty = true;
}

function turn(dx, dy, aroundTarget) {
  const pivot = aroundTarget ? state.target : state.p;
  const yaw = rotation(up(), -dx);
  rotateView(yaw, pivot);
  // no pitch past the poles
  const pitched = apply(rotation(norm(row(state.R, 0)), -dy), forward());
  if (Math.abs(dot(pitched, up())) < 0.985) rotateView(rotation(norm(row(state.R, 0)), -dy), pivot);
}

function pan(dx, dy) {
  const d = Math.hypot(...sub(state.target, state.p));
  const f = request_intrinsics().fy || 500;
  const move = add(scale(row(state.R, 0), -dx * d / f), scale(row(state.R, 1), -dy * d / f));
  state.exactT = null;
  state.p = add(state.p, move);
  state.target = add(state.target, move);
  state.dirty = true;
}

function zoom(amount) {
  if ($('nav').value === 'fly') {
    move(scale(forward(), -amount * radius()));
    return;
  }
  const offset = sub(state.p, state.target);
  const k = Math.exp(amount);
  if (Math.hypot(...offset) * k < 1e-3 * radius()) return;
  state.exactT = null;
  state.p = add(state.target, scale(offset, k));
  state.dirty = true;
}

function move(v) {
  state.exactT = null;
  state.p = add(state.p, v);
  state.target = add(state.target, v);
  state.dirty = true;
}

// ------------------------------------------------------------------ input

const overlay = $('overlay');

overlay.addEventListener('contextmenu', (e) => e.preventDefault());

overlay.addEventListener('pointerdown', (e) => {
  overlay.setPointerCapture(e.pointerId);
  overlay.focus();
  state.pointers.set(e.pointerId, { x: e.clientX, y: e.clientY, button: e.button, shift: e.shiftKey });
});

function pinch() {
  const [a, b] = [...state.pointers.values()];
  return { d: Math.hypot(a.x - b.x, a.y - b.y), x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 };
}

overlay.addEventListener('pointermove', (e) => {
  const p = state.pointers.get(e.pointerId);
  if (!p) return;
  if (state.pointers.size === 2) {
    const before = pinch();
    p.x = e.clientX;
    p.y = e.clientY;
    const after = pinch();
    if (before.d > 0 && after.d > 0) zoom(Math.log(before.d / after.d));
    pan(after.x - before.x, after.y - before.y);
    return;
  }
  const dx = e.clientX - p.x, dy = e.clientY - p.y;
  p.x = e.clientX;
  p.y = e.clientY;
  if (p.button === 2 || p.button === 1 || p.shift) pan(dx, dy);
  else turn(dx * 0.005, dy * 0.005, $('nav').value === 'orbit');
});

const release = (e) => state.pointers.delete(e.pointerId);
overlay.addEventListener('pointerup', release);
overlay.addEventListener('pointercancel', release);

overlay.addEventListener('wheel', (e) => {
  e.preventDefault();
  zoom(Math.sign(e.deltaY) * Math.min(Math.abs(e.deltaY), 100) * 0.002);
}, { passive: false });

window.addEventListener('keydown', (e) => {
  if (e.target instanceof HTMLSelectElement || e.target instanceof HTMLInputElement) return;
  const k = e.key.toLowerCase();
  if (k === 'f') $('nav').value = $('nav').value === 'orbit' ? 'fly' : 'orbit';
  else if (k === '[' || k === ']') {
    const n = state.hello ? state.hello.cameras.length : 0;
    if (n) jumpTo(((state.camera < 0 ? 0 : state.camera) + (k === ']' ? 1 : n - 1)) % n);
  } else state.keys.add(k);
  if (['arrowup', 'arrowdown', 'arrowleft', 'arrowright', ' '].includes(k)) e.preventDefault();
});
window.addEventListener('keyup', (e) => state.keys.delete(e.key.toLowerCase()));
window.addEventListener('blur', () => state.keys.clear());

// Held keys move the camera a little every animation frame.
function applyKeys(dt) {
  if (!state.keys.size) return;
  const fast = state.keys.has('shift') ? 4 : 1;
  const step = radius() * 0.6 * dt * fast, look = 1.2 * dt;
  const k = (name) => state.keys.has(name);
  const f = forward(), r = row(state.R, 0), u = up();
  if (k('w')) move(scale(f, step));
  if (k('s')) move(scale(f, -step));
  if (k('d')) move(scale(r, step));
  if (k('a')) move(scale(r, -step));
  if (k('e')) move(scale(u, step));
  if (k('q')) move(scale(u, -step));
  if (k('arrowleft')) turn(-look, 0, false);
  if (k('arrowright')) turn(look, 0, false);
  if (k('arrowup')) turn(0, -look, false);
  if (k('arrowdown')) turn(0, look, false);
}

$('camera').addEventListener('change', () => jumpTo(Number($('camera').value)));
for (const id of ['scale', 'quality']) $(id).addEventListener('change', () => { state.dirty = true; });
$('frustums').addEventListener('change', () => drawOverlay());
$('pause').addEventListener('click', () => send({ t: 'pause' }));
$('resume').addEventListener('click', () => send({ t: 'resume' }));
$('save').addEventListener('click', () => send({ t: 'save' }));

// ------------------------------------------------------------------ requests

// The intrinsics of the next request: a dataset camera's own (scaled), or the window's.
function request_intrinsics() {
  const s = Number($('scale').value);
  const max = state.hello ? state.hello.max_side : 2048;
  if (state.intr) {
    const c = state.intr;
    let k = s;
    if (c.w * k > max || c.h * k > max) k = Math.min(max / c.w, max / c.h);
    const w = Math.max(1, Math.round(c.w * k)), h = Math.max(1, Math.round(c.h * k));
    if (k === 1) return { w, h, fx: c.fx, fy: c.fy, cx: c.cx, cy: c.cy };
    return { w, h, fx: c.fx * w / c.w, fy: c.fy * h / c.h, cx: c.cx * w / c.w, cy: c.cy * h / c.h };
  }
  const dpr = window.devicePixelRatio || 1;
  let w = Math.round(overlay.clientWidth * dpr * s), h = Math.round(overlay.clientHeight * dpr * s);
  const k = Math.min(1, max / Math.max(w, h, 1));
  w = Math.max(16, Math.round(w * k));
  h = Math.max(16, Math.round(h * k));
  const f = 0.5 * h / Math.tan(state.fovY / 2);
  return { w, h, fx: f, fy: f, cx: w / 2, cy: h / 2 };
}

function send(msg) {
  if (state.ws && state.ws.readyState === WebSocket.OPEN) state.ws.send(JSON.stringify(msg));
}

function requestFrame(now) {
  const c = request_intrinsics();
  const T = state.exactT ? state.exactT.slice() : scale(apply(state.R, state.p), -1);
  const cam = { ...c, R: state.R.slice(), T };
  const id = state.nextId++;
  send({ t: 'frame', id, w: c.w, h: c.h, q: Number($('quality').value), fx: c.fx, fy: c.fy, cx: c.cx, cy: c.cy,
         R: cam.R, T });
  state.inflight = { id, sent: now };
  state.sentCams.set(id, cam);
  if (state.sentCams.size > 16) state.sentCams.delete(state.sentCams.keys().next().value);
  state.lastSent = now;
  state.dirty = false;
}

let lastTick = performance.now();
function tick(now) {
  const dt = Math.min(0.1, (now - lastTick) / 1000);
  lastTick = now;
  applyKeys(dt);
  const interval = 1000 / Number($('fps').value);
  if (state.inflight && now - state.inflight.sent > 5000) state.inflight = null; // lost: ask again
  const live = state.hello && state.hello.mode === 'train' && state.stats && !state.stats.done && !state.stats.paused;
  if (state.hello && !state.inflight && (state.dirty || live) && now - state.lastSent >= interval) requestFrame(now);
  requestAnimationFrame(tick);
}

// ------------------------------------------------------------------ drawing

const view = $('view');
const gview = view.getContext('2d');
const gover = overlay.getContext('2d');

function fitCanvas(c) {
  const dpr = window.devicePixelRatio || 1;
  const w = Math.round(c.clientWidth * dpr), h = Math.round(c.clientHeight * dpr);
  if (c.width !== w || c.height !== h) {
    c.width = w;
    c.height = h;
  }
}

// Where an image of w x h lands in the canvas (centred, whole, aspect kept).
function placement(w, h) {
  const s = Math.min(view.width / w, view.height / h);
  return { s, x: (view.width - w * s) / 2, y: (view.height - h * s) / 2 };
}

function drawFrame() {
  fitCanvas(view);
  gview.fillStyle = '#111';
  gview.fillRect(0, 0, view.width, view.height);
  const f = state.last;
  if (!f) return;
  const p = placement(f.w, f.h);
  gview.imageSmoothingEnabled = true;
  gview.drawImage(f.bitmap, p.x, p.y, f.w * p.s, f.h * p.s);
  drawOverlay();
}

// The dataset's cameras as frustums, projected with the camera of the frame on screen.
function drawOverlay() {
  fitCanvas(overlay);
  gover.clearRect(0, 0, overlay.width, overlay.height);
  const f = state.last;
  if (!f || !$('frustums').checked || !state.hello) return;
  const cam = state.sentCams.get(f.id);
  if (!cam) return;
  const p = placement(f.w, f.h);
  const near = 1e-3 * radius();
  const project = (X) => {
    const c = add(apply(cam.R, X), cam.T);
    return c[2] > near ? [p.x + (cam.fx * c[0] / c[2] + cam.cx) * p.s, p.y + (cam.fy * c[1] / c[2] + cam.cy) * p.s] : null;
  };
  const depth = 0.08 * radius();
  gover.lineWidth = Math.max(1, (window.devicePixelRatio || 1));
  state.hello.cameras.forEach((k, i) => {
    const o = [0, 1, 2].map((j) => -(k.R[j] * k.T[0] + k.R[3 + j] * k.T[1] + k.R[6 + j] * k.T[2]));
    const corner = (u, v) => {
      const c = [(u - k.cx) / k.fx * depth, (v - k.cy) / k.fy * depth, depth];
      return add(o, [0, 1, 2].map((j) => k.R[j] * c[0] + k.R[3 + j] * c[1] + k.R[6 + j] * c[2]));
    };
    const pts = [o, corner(0, 0), corner(k.w, 0), corner(k.w, k.h), corner(0, k.h)].map(project);
    const segs = [[0, 1], [0, 2], [0, 3], [0, 4], [1, 2], [2, 3], [3, 4], [4, 1]];
    gover.strokeStyle = i === state.camera ? '#ffcc33' : 'rgba(120, 200, 255, 0.7)';
    gover.beginPath();
    for (const [a, b] of segs) {
      if (!pts[a] || !pts[b]) continue;
      gover.moveTo(pts[a][0], pts[a][1]);
      gover.lineTo(pts[b][0], pts[b][1]);
    }
    gover.stroke();
  });
}

window.addEventListener('resize', () => {
  state.dirty = true;
  drawFrame();
});

function drawChart() {
  const c = $('chart'), g = c.getContext('2d');
  g.clearRect(0, 0, c.width, c.height);
  const h = state.history.filter((p) => p[1] !== null && p[2] !== null);
  if (h.length < 2) return;
  const steps = h.map((p) => p[0]);
  const x0 = Math.min(...steps), x1 = Math.max(...steps);
  const line = (values, color, log) => {
    const v = values.map((y) => (log ? Math.log10(Math.max(y, 1e-6)) : y));
    let lo = Math.min(...v), hi = Math.max(...v);
    if (hi - lo < 1e-9) { lo -= 1; hi += 1; }
    g.strokeStyle = color;
    g.lineWidth = 1.5;
    g.beginPath();
    v.forEach((y, i) => {
      const px = 4 + (steps[i] - x0) / Math.max(1, x1 - x0) * (c.width - 8);
      const py = c.height - 4 - (y - lo) / (hi - lo) * (c.height - 8);
      if (i) g.lineTo(px, py); else g.moveTo(px, py);
    });
    g.stroke();
  };
  line(h.map((p) => p[1]), '#e8a33d', true);
  line(h.map((p) => p[2]), '#4fa3e0', false);
}

// ------------------------------------------------------------------ the page's numbers

const fmt = (v, digits) => (v === null || v === undefined || !isFinite(v) ? '–' : v.toFixed(digits));

function showStats() {
  const s = state.stats;
  if (!s) return;
  const train = state.hello && state.hello.mode === 'train';
  $('training').hidden = !train;
  if (!train) return;
  $('step').textContent = `${s.step} / ${s.steps}`;
  $('loss').textContent = fmt(s.loss, 4);
  $('psnr').textContent = fmt(s.psnr, 2);
  $('count').textContent = s.n.toLocaleString('en');
  $('its').textContent = fmt(s.its, 1);
  const eta = s.eta > 0 ? `${Math.floor(s.eta / 60)}m${String(Math.floor(s.eta % 60)).padStart(2, '0')}s` : '–';
  $('eta').textContent = eta;
  $('state').textContent = s.done ? 'training is over' : s.paused ? 'paused' : s.pause_asked ? 'pausing…' : 'training';
  $('pause').disabled = s.done || s.paused || s.pause_asked;
  $('resume').disabled = s.done || !(s.paused || s.pause_asked);
  $('save').disabled = s.done;
}

function onHello(h) {
  const first = !state.hello;
  state.hello = h;
  state.history = h.history || [];
  state.stats = h.stats;
  $('mode').textContent = h.mode === 'train' ? 'training' : 'viewing';
  const sel = $('camera');
  sel.length = 1;
  h.cameras.forEach((c, i) => sel.add(new Option(`${i}: ${c.name}`, String(i))));
  if (first) {
    if (h.cameras.length) jumpTo(0);
    else {
      const c = center(), r = radius();
      const side = norm(cross(up(), Math.abs(up()[2]) < 0.9 ? [0, 0, 1] : [1, 0, 0]));
      lookAt(add(c, add(scale(side, -2.5 * r), scale(up(), 0.8 * r))), c);
    }
  } else {
    sel.value = String(state.camera);
  }
  showStats();
  drawChart();
  state.dirty = true;
}

function onText(m) {
  if (m.t === 'hello') onHello(m);
  else if (m.t === 'stats') {
    // training stopping (paused, done): one more frame, of the parameters where it stopped
    const wasLive = state.stats && !state.stats.done && !state.stats.paused;
    if (wasLive && (m.done || m.paused)) state.dirty = true;
    state.stats = m;
    const last = state.history[state.history.length - 1];
    if (m.loss !== null && (!last || m.step > last[0])) state.history.push([m.step, m.loss, m.psnr]);
    if (state.history.length > 4096) state.history = state.history.filter((_, i) => i % 2);
    showStats();
    drawChart();
  } else if (m.t === 'note') {
    $('note').textContent = m.text;
  } else if (m.t === 'error') {
    $('note').textContent = `frame ${m.id}: ${m.text}`;
    if (state.inflight && state.inflight.id === m.id) state.inflight = null;
  }
}

// A frame message (src/view/view.h): a header of little-endian uint32 words (hello.frame_header
// bytes), the number of strips n, n times (first row, rows, bytes), then the strips' JPEGs. Throws
// unless the strips cover the image's rows exactly once, in order, and their JPEGs fill the rest of
// the message exactly.
function parseFrame(data) {
  const header = state.hello && state.hello.frame_header;
  if (!(header >= 24) || !(data instanceof ArrayBuffer) || data.byteLength < header + 4) throw new Error('shorter than its header');
  const d = new DataView(data);
  const u32 = (at) => d.getUint32(at, true);
  const f = { id: u32(0), step: u32(4), w: u32(8), h: u32(12), renderMs: u32(16) / 1000, gaussians: u32(20), strips: [] };
  const max = state.hello.max_side || 65535;
  if (f.w < 1 || f.h < 1 || f.w > max || f.h > max) throw new Error(`a size of ${f.w}x${f.h}`);
  const n = u32(header);
  if (n < 1 || n > f.h) throw new Error(`${n} strips for ${f.h} rows`);
  let at = header + 4 + 12 * n;
  if (at > data.byteLength) throw new Error('its strip table is cut short');
  let y = 0;
  for (let k = 0; k < n; k++) {
    const sy = u32(header + 4 + 12 * k), rows = u32(header + 8 + 12 * k), bytes = u32(header + 12 + 12 * k);
    if (sy !== y) throw new Error(`strip ${k} starts at row ${sy}, not ${y}`);
    if (rows < 1 || rows > f.h - y) throw new Error(`strip ${k} has ${rows} rows, ${f.h - y} are left`);
    if (bytes < 1 || bytes > data.byteLength - at) throw new Error(`strip ${k} has ${bytes} bytes, ${data.byteLength - at} are left`);
    f.strips.push({ y, rows, jpeg: new Uint8Array(data, at, bytes) });
    at += bytes;
    y += rows;
  }
  if (y !== f.h) throw new Error(`the strips cover ${y} of ${f.h} rows`);
  if (at !== data.byteLength) throw new Error(`${data.byteLength - at} bytes after the strips`);
  return f;
}

function rejectFrame(data, err) {
  state.rejected++;
  console.warn('viewer: a malformed frame:', err.message);
  $('note').textContent = `a malformed frame: ${err.message}`;
  // its request is answered, if the id can be read: ask again rather than wait for the timeout
  const id = data instanceof ArrayBuffer && data.byteLength >= 4 ? new DataView(data).getUint32(0, true) : null;
  if (state.inflight && state.inflight.id === id) state.inflight = null;
  return false;
}

// Shows a frame message; resolves true when it was shown, false when it was refused (malformed,
// an undecodable strip) or an older frame decoded after a newer one.
async function onFrame(data, now) {
  let f;
  try {
    f = parseFrame(data);
  } catch (err) {
    return rejectFrame(data, err);
  }
  const sent = state.inflight && state.inflight.id === f.id ? state.inflight.sent : null;
  if (state.inflight && state.inflight.id <= f.id) state.inflight = null;
  const decoded = await Promise.allSettled(f.strips.map((s) => createImageBitmap(new Blob([s.jpeg], { type: 'image/jpeg' }),
    { colorSpaceConversion: 'none', premultiplyAlpha: 'none' })));
  const strips = decoded.map((r) => (r.status === 'fulfilled' ? r.value : null));
  const bad = strips.findIndex((b, k) => !b || b.width !== f.w || b.height !== f.strips[k].rows);
  if (bad >= 0) {
    strips.forEach((b) => b && b.close());
    const b = strips[bad];
    return rejectFrame(data, new Error(b ? `strip ${bad} is ${b.width}x${b.height}, not ${f.w}x${f.strips[bad].rows}`
                                         : `strip ${bad} is not a JPEG that decodes`));
  }
  if (state.last && state.last.id > f.id) { // an older frame decoded late
    strips.forEach((b) => b.close());
    return false;
  }
  // each strip at its row, 1:1, into one image: scaled later as a whole, with no seams
  const canvas = new OffscreenCanvas(f.w, f.h);
  const g = canvas.getContext('2d');
  strips.forEach((b, k) => {
    g.drawImage(b, 0, f.strips[k].y);
    b.close();
  });
  const bitmap = canvas.transferToImageBitmap();
  if (state.last && state.last.bitmap) state.last.bitmap.close();
  state.last = { id: f.id, step: f.step, w: f.w, h: f.h, renderMs: f.renderMs, gaussians: f.gaussians, strips: f.strips.length,
                 latencyMs: sent === null ? null : now - sent, bitmap };
  state.frames++;
  drawFrame();
  const stepText = state.hello && state.hello.mode === 'train' ? ` · step ${f.step}` : '';
  $('info').textContent = `${f.w}×${f.h} · ${f.gaussians.toLocaleString('en')} Gaussians · rendered in ${f.renderMs.toFixed(1)} ms` +
    (sent === null ? '' : ` · ${Math.round(now - sent)} ms round trip`) + stepText;
  return true;
}

// ------------------------------------------------------------------ the connection

function connect() {
  const ws = new WebSocket(`ws://${location.host}/ws`, 'splatc');
  ws.binaryType = 'arraybuffer';
  state.ws = ws;
  ws.onopen = () => $('conn').classList.add('up');
  ws.onclose = () => {
    $('conn').classList.remove('up');
    $('mode').textContent = 'disconnected; retrying…';
    state.inflight = null;
    setTimeout(connect, 1000);
  };
  ws.onmessage = (e) => {
    if (typeof e.data === 'string') {
      try {
        onText(JSON.parse(e.data));
      } catch (err) {
        console.error('viewer: bad message', err);
      }
    } else {
      onFrame(e.data, performance.now());
    }
  };
}

connect();
requestAnimationFrame(tick);
