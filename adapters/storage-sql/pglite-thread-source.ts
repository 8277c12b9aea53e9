// The code of the PGlite thread (pglite-thread.ts): run by `new Worker(source, { eval: true })`, so it
// is plain CommonJS JavaScript in a string, with no imports of ours (a tsup chunk or a `.ts` source
// cannot be a worker's file in every way flowctl is loaded). It loads PGlite from the path the
// main thread resolved, opens it, and answers messages:
//   { id, op: 'query', sql, params, options, tx? }   -> { id, value: results }
//   { id, op: 'exec', sql, tx? }                     -> { id, value: results[] }
//   { id, op: 'begin' }                              -> { id, value: txId } once the transaction holds PGlite
//   { id, op: 'end', tx, commit }                    -> { id } once it committed or rolled back
//   { id, op: 'listen', listen, channel }            -> { id }; then { op: 'notify', listen, payload }
//   { id, op: 'unlisten', listen }                   -> { id }
//   { id, op: 'close' }                              -> { id } once PGlite closed
// An error answers { id, error: { message, name, stack, ...fields } } (SQLSTATE `code`, `detail`,
// `constraint`... kept as plain fields: structured clone drops an Error's own properties).
export const PGLITE_THREAD_SOURCE = `
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const { PGlite } = require(workerData.module);

const plainError = (err) => {
  const out = { message: String(err && err.message !== undefined ? err.message : err), name: err && err.name, stack: err && err.stack };
  if (err && typeof err === 'object') {
    for (const key of Object.keys(err)) {
      const value = err[key];
      if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) out[key] = value;
    }
  }
  return out;
};
const send = (message) => parentPort.postMessage(message);
const answer = (id, work) =>
  Promise.resolve()
    .then(work)
    .then(
      (value) => send({ id, value }),
      (err) => send({ id, error: plainError(err) }),
    );

const db = new PGlite(workerData.dataDir);
const transactions = new Map(); // tx id -> { tx, finish(commit), closed }
const listeners = new Map(); // subscription id (the main side's) -> unsubscribe
const ROLLBACK = Symbol('rollback');
const on = (txId) => {
  if (txId === undefined) return db;
  const state = transactions.get(txId);
  if (!state) throw new Error('the transaction is over');
  return state.tx;
};

// PGlite's own exclusive transaction, held open until the main thread says commit or roll back.
function beginTransaction(id) {
  const state = { tx: undefined, finish: undefined, closed: undefined };
  state.closed = db.transaction(
    (tx) =>
      new Promise((resolve, reject) => {
        state.tx = tx;
        state.finish = (commit) => (commit ? resolve() : reject(ROLLBACK));
        transactions.set(id, state);
        send({ id, value: id });
      }),
  );
  state.closed
    .catch((err) => {
      if (state.tx === undefined) send({ id, error: plainError(err) });
    })
    .finally(() => transactions.delete(id));
}

function endTransaction(id, txId, commit) {
  const state = transactions.get(txId);
  if (!state) return send({ id, error: { message: 'the transaction is over' } });
  state.finish(commit);
  return answer(id, () =>
    state.closed.then(
      () => undefined,
      (err) => {
        if (err !== ROLLBACK) throw err;
      },
    ),
  );
}

parentPort.on('message', (m) => {
  switch (m.op) {
    case 'query':
      return answer(m.id, () => on(m.tx).query(m.sql, m.params, m.options));
    case 'exec':
      return answer(m.id, () => on(m.tx).exec(m.sql));
    case 'begin':
      return beginTransaction(m.id);
    case 'end':
      return endTransaction(m.id, m.tx, m.commit);
    case 'listen':
      return answer(m.id, async () => {
        listeners.set(m.listen, await db.listen(m.channel, (payload) => send({ op: 'notify', listen: m.listen, payload })));
      });
    case 'unlisten':
      return answer(m.id, async () => {
        const unsubscribe = listeners.get(m.listen);
        listeners.delete(m.listen);
        if (unsubscribe) await unsubscribe();
      });
    case 'close':
      return answer(m.id, () => (db.closed ? undefined : db.close()));
    default:
      return send({ id: m.id, error: { message: 'unknown operation ' + m.op } });
  }
});

db.waitReady.then(
  () => send({ op: 'ready' }),
  (err) => send({ op: 'ready', error: plainError(err) }),
);
`;
