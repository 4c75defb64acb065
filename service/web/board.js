// The web board: play any served game against the model, or watch it play itself.
// Plain JavaScript, no build step. Talks to the REST API of the server that serves it.
"use strict";

const $ = (id) => document.getElementById(id);
const state = {
  games: [], game: null, cells: [], moves: [], over: false, busy: false,
  human: "X", autoplay: false, token: 0, played: "",
};
const scores = JSON.parse(localStorage.getItem("gameai-scores") || "null") ||
  { human: 0, ai: 0, draw: 0, autoX: 0, autoO: 0, autoDraw: 0 };

async function api(path, body) {
  const options = body === undefined ? {} : {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body),
  };
  const response = await fetch(path, options);
  const data = await response.json();
  if (!response.ok) {
    const error = new Error(data.error ? data.error.message : response.statusText);
    error.status = response.status;
    throw error;
  }
  return data;
}

// -- rules (the server checks them too; these only decide whose turn it is and the end) --

function boardText() {
  const g = state.game, rows = [];
  for (let r = 0; r < g.rows; r++) {
    rows.push(state.cells.slice(r * g.cols, (r + 1) * g.cols).map((c) => c || "-").join(""));
  }
  return rows.join("|");
}

function toMove() {
  const xs = state.cells.filter((c) => c === "X").length;
  const os = state.cells.filter((c) => c === "O").length;
  return xs === os ? "X" : "O";
}

function winningLine() {
  const g = state.game, dirs = [[0, 1], [1, 0], [1, 1], [1, -1]];
  for (let r = 0; r < g.rows; r++) {
    for (let c = 0; c < g.cols; c++) {
      const p = state.cells[r * g.cols + c];
      if (!p) continue;
      for (const [dr, dc] of dirs) {
        const line = [];
        for (let s = 0; s < g.k; s++) {
          const rr = r + dr * s, cc = c + dc * s;
          if (rr < 0 || rr >= g.rows || cc < 0 || cc >= g.cols) break;
          if (state.cells[rr * g.cols + cc] !== p) break;
          line.push(rr * g.cols + cc);
        }
        if (line.length === g.k) return { player: p, line };
      }
    }
  }
  return null;
}

function target(index) {
  // Under gravity a click anywhere in a column drops into its lowest empty cell.
  const g = state.game;
  if (!g.gravity) return state.cells[index] ? -1 : index;
  const col = index % g.cols;
  for (let r = g.rows - 1; r >= 0; r--) {
    if (!state.cells[r * g.cols + col]) return r * g.cols + col;
  }
  return -1;
}

// -- drawing ---------------------------------------------------------------------------

function draw(values) {
  const g = state.game, board = $("board");
  board.style.gridTemplateColumns = `repeat(${g.cols}, auto)`;
  if (board.children.length !== g.cells) {
    board.replaceChildren();
    for (let i = 0; i < g.cells; i++) {
      const cell = document.createElement("button");
      cell.type = "button";
      cell.className = "cell";
      cell.dataset.index = i;
      cell.setAttribute("aria-label", `row ${Math.floor(i / g.cols)}, column ${i % g.cols}`);
      cell.addEventListener("click", () => humanMove(i));
      board.appendChild(cell);
    }
  }
  const win = winningLine(), last = state.moves[state.moves.length - 1];
  for (const cell of board.children) {
    const i = Number(cell.dataset.index), piece = state.cells[i];
    cell.className = "cell" + (piece ? " " + piece : "") + (i === last ? " last" : "") +
      (win && win.line.includes(i) ? " win" : "");
    cell.textContent = piece || "";
    cell.style.background = "";
    cell.dataset.value = "";
    const v = values && values[i];
    cell.title = "";
    if (v === null && !piece) {
      // The model has no value for this move: say so, never paint it as a draw.
      cell.className += " unknown";
      cell.dataset.value = "unknown";
      cell.title = "unknown: the model has no value for this move";
      const label = document.createElement("span");
      label.className = "value";
      label.textContent = "?";
      cell.appendChild(label);
    } else if (v !== undefined && !piece) {
      cell.style.background = heat(v);
      cell.dataset.value = v;
      const label = document.createElement("span");
      label.className = "value";
      label.textContent = v.toFixed(2);
      cell.appendChild(label);
    }
    cell.disabled = !!piece || state.over || state.busy || state.autoplay ||
      toMove() !== state.human;
  }
}

function heat(value) {
  // -1 red, 0 yellow, +1 green.
  const hue = Math.round(60 + 60 * Math.max(-1, Math.min(1, value)));
  return `hsl(${hue}, 75%, 72%)`;
}

function setStatus(text, isError) {
  $("status").textContent = text;
  $("status").className = isError ? "error" : "";
}

function showScores() {
  $("score-human").textContent = scores.human;
  $("score-ai").textContent = scores.ai;
  $("score-draw").textContent = scores.draw;
  $("auto-x").textContent = scores.autoX;
  $("auto-o").textContent = scores.autoO;
  $("auto-draw").textContent = scores.autoDraw;
  localStorage.setItem("gameai-scores", JSON.stringify(scores));
}

// -- play ------------------------------------------------------------------------------

function finish() {
  if (state.over) {
    draw();
    return true;
  }
  const win = winningLine();
  const full = state.cells.every((c) => c);
  if (!win && !full) return false;
  state.over = true;
  if (state.autoplay) {
    if (!win) scores.autoDraw++; else if (win.player === "X") scores.autoX++; else scores.autoO++;
    setStatus(win ? `${win.player} wins (AI vs AI)` : "Draw (AI vs AI)");
  } else if (!win) {
    scores.draw++;
    setStatus("Draw. New game?");
  } else if (win.player === state.human) {
    scores.human++;
    setStatus(`${win.player} wins: you beat the model!`);
  } else {
    scores.ai++;
    setStatus(`${win.player} wins: the model won.`);
  }
  showScores();
  draw();
  return true;
}

async function refresh() {
  // After every move: the end of the game, the heat map, then the AI's turn if it is one.
  if (finish()) {
    state.busy = false;
    return;
  }
  const token = state.token;
  let values;
  if ($("heatmap").checked) {
    try {
      const e = await api(`/v1/games/${state.game.name}/evaluate`,
                          { board: boardText(), model: $("model").value });
      if (token !== state.token) return;
      values = {};
      for (const m of e.moves) values[m.index] = m.unknown ? null : m.value;
      $("answered-by").textContent = [state.played, `values from model version ${e.model_version}`]
        .filter(Boolean).join(" · ");
    } catch (error) {
      setStatus(error.message, true);
    }
  }
  state.busy = false;
  draw(values);
  if (state.autoplay || toMove() !== state.human) {
    await aiMove(token, values);
  } else {
    setStatus(`Your move (${state.human})`);
  }
}

async function aiMove(token, values) {
  state.busy = true;
  setStatus(`The model is thinking (${toMove()})…`);
  try {
    if (state.autoplay) await new Promise((ok) => setTimeout(ok, 250));
    const a = await api(`/v1/games/${state.game.name}/best-move`,
                        { board: boardText(), model: $("model").value, client_id: clientId() });
    if (token !== state.token) return;
    const mover = toMove();
    state.cells[a.move.index] = mover;
    state.moves.push(a.move.index);
    state.played =
      `model version ${a.model_version} played ${mover} at row ${a.move.row}, ` +
      `column ${a.move.col} (` + (values && values[a.move.index] === null
        ? "value unknown: the model never learned this position" : `value ${a.value.toFixed(2)}`) +
      ")";
    $("answered-by").textContent = state.played;
  } catch (error) {
    if (token === state.token) setStatus(error.message, true);
    state.busy = false;
    return;
  }
  state.busy = false;
  await refresh();
}

function humanMove(index) {
  if (state.over || state.busy || state.autoplay || toMove() !== state.human) return;
  const cell = target(index);
  if (cell < 0) return;
  state.cells[cell] = state.human;
  state.moves.push(cell);
  state.busy = true;
  setStatus("The model is thinking…");
  draw();
  refresh();
}

function clientId() {
  let id = localStorage.getItem("gameai-client");
  if (!id) {
    id = `web-${Math.random().toString(36).slice(2)}`;
    localStorage.setItem("gameai-client", id);
  }
  return id;
}

function newGame(autoplay) {
  state.token++;
  state.game = state.games.find((g) => g.name === $("game").value);
  state.cells = new Array(state.game.rows * state.game.cols).fill(null);
  state.game.cells = state.cells.length;
  state.moves = [];
  state.over = false;
  state.busy = false;
  state.autoplay = !!autoplay;
  state.human = $("side").value;
  state.played = "";
  $("answered-by").textContent = "";
  refresh();
}

async function loadModels() {
  const select = $("model"), game = $("game").value;
  select.replaceChildren(new Option("production (with canary share)", ""));
  $("pin").textContent = "";
  try {
    const listing = await api(`/v1/games/${game}/models`);
    if (listing.pin) {
      $("pin").textContent = `Production (version ${listing.pin.version}) is pinned by ` +
        `${listing.pin.by} since ${listing.pin.at}: the trainer will not replace it ` +
        "until an operator releases it.";
    }
    for (const [alias, version] of Object.entries(listing.aliases)) {
      if (alias !== "production") select.add(new Option(`${alias} (v${version})`, alias));
    }
    for (const v of listing.versions.slice().reverse()) {
      const names = v.aliases.length ? ` (${v.aliases.join(", ")})` : "";
      select.add(new Option(`version ${v.version}${names}`, String(v.version)));
    }
  } catch (error) {
    setStatus(error.message, true);
  }
}

// The games the server serves; one without a production model yet (its trainer is still
// learning) is listed but cannot be chosen until it has one.
function fillGames() {
  const select = $("game"), chosen = select.value;
  select.replaceChildren();
  for (const g of state.games) {
    const option = new Option(g.ready ? g.name : `${g.name} (training: no model yet)`, g.name);
    option.disabled = !g.ready;
    select.add(option);
  }
  const ready = state.games.filter((g) => g.ready).map((g) => g.name);
  select.value = ready.includes(chosen) ? chosen : (ready[0] || "");
  return ready.length > 0;
}

async function followGames() {
  try {
    state.games = (await api("/v1/games")).games;
  } catch (error) {
    return;  // the server is restarting: keep what is shown
  }
  const playing = $("game").value;
  if (fillGames() && !playing) {
    await loadModels();
    newGame(false);
  }
}

async function start() {
  try {
    state.games = (await api("/v1/games")).games;
  } catch (error) {
    setStatus(`cannot list games: ${error.message}`, true);
    return;
  }
  const playable = fillGames();
  setInterval(followGames, 3000);
  if (playable) {
    await loadModels();
  } else {
    setStatus("No game has a model yet: the trainers are still learning.", true);
  }
  showScores();
  $("game").addEventListener("change", async () => { await loadModels(); newGame(false); });
  $("model").addEventListener("change", () => newGame(false));
  $("side").addEventListener("change", () => newGame(false));
  $("new-game").addEventListener("click", () => newGame(false));
  $("autoplay").addEventListener("click", () => newGame(true));
  $("heatmap").addEventListener("change", () => { if (!state.busy) refresh(); });
  $("reset-scores").addEventListener("click", () => {
    for (const key of Object.keys(scores)) scores[key] = 0;
    showScores();
  });
  if (playable) newGame(false);
}

start();
