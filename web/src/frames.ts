/** A screencast frame as the live sockets send it: a base64 JPEG and the page size it shows. */
export interface Frame {
  data: string;
  width: number;
  height: number;
}

/**
 * Draws screencast frames on a canvas, newest only: frames that arrive while one decodes replace
 * each other, so a slow client skips frames instead of falling behind. The canvas takes the frame's
 * size, and `data-frames` counts the frames drawn (tests and tools read it). `onDrawn` is called
 * after each frame with that count.
 */
export function frameDrawer(canvasOf: () => HTMLCanvasElement | null, onDrawn?: (count: number) => void): (frame: Frame) => void {
  let waiting: Frame | null = null;
  let drawing = false;
  let count = 0;
  const draw = () => {
    const f = waiting;
    const canvas = canvasOf();
    if (!f || !canvas) return;
    waiting = null;
    drawing = true;
    const img = new Image();
    img.onload = () => {
      if (f.width > 0 && f.height > 0 && (canvas.width !== f.width || canvas.height !== f.height)) {
        canvas.width = f.width;
        canvas.height = f.height;
      }
      canvas.getContext('2d')?.drawImage(img, 0, 0, canvas.width, canvas.height);
      count += 1;
      canvas.dataset.frames = String(count);
      drawing = false;
      onDrawn?.(count);
      if (waiting) draw();
    };
    img.onerror = () => {
      drawing = false;
      if (waiting) draw();
    };
    img.src = `data:image/jpeg;base64,${f.data}`;
  };
  return (frame) => {
    waiting = frame;
    if (!drawing) draw();
  };
}

/**
 * Open a live socket of the service on this page's origin (`path`: `/api/...`, with its query) and
 * hand each JSON message to `onMessage`; a message that is not JSON is ignored.
 */
export function openLiveSocket(path: string, onMessage: (message: any) => void): WebSocket {
  const proto = window.location.protocol === 'https:' ? 'wss:' : 'ws:';
  const ws = new WebSocket(`${proto}//${window.location.host}${path}`);
  ws.onmessage = (event) => {
    let m: unknown;
    try {
      m = JSON.parse(String(event.data));
    } catch {
      return;
    }
    onMessage(m);
  };
  return ws;
}
