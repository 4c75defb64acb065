// The web board: play any served game against the model, or watch it play itself.
// Plain JavaScript, no build step. Talks to the REST API of the server that serves it.
//
// Games whose pieces move (Three Men's Morris, and any game that lists "pieces" in
// GET /v1/games, such as one that plugs in) are played by clicking a piece and then a
// point, or by dragging the piece; a placement is a click on its point. The board knows
// none of their rules: it starts from the game's "start" position, takes the legal moves
// from the server's answer for each position, and learns that the game is over, and who
// won, from the server's 409 (its "winner"). The side to move is kept here and sent as
// to_move, and the game's history decides the draw rule (a position that occurs for the
// third time draws).
//
// The model plays at the chosen level of play (GET /v1/games/{game}/levels lists them with
// their measured strength) with one seed per game, so a game can be replayed; the hint
// button asks /analyze for every move's exact outcome and the line the model expects.
"use strict";

const $ = (id) => document.getElementById(id);
const state = {
  games: [], game: null, cells: [], moves: [], over: false, busy: false,
  human: "X", autoplay: false, token: 0,
  side: "X", selected: null, history: new Map(), repeated: false,  // pieces that move
  legal: [],  // pieces that move: the legal moves of the position shown, from the server
  played: "",  // what the model last played, shown with the values that follow
  levels: [], seed: 0, hint: null,  // levels of play; this game's seed; the hint shown
  actions: [],  // the game's moves as action ids, what a review replays
};
// How the review marks a move: the judgments worth a mark on the graph.
const BAD = ["blunder", "throws_away_win", "walks_into_loss"];
const JUDGED = {
  best: "best", good: "good", inaccuracy: "an inaccuracy", mistake: "a mistake",
  blunder: "a blunder", throws_away_win: "throws away a forced win",
  walks_into_loss: "walks into a forced loss",
};
// The scoreboard keeps each game's results apart: a tic-tac-toe draw is no Connect Four draw.
const scoresByGame = JSON.parse(localStorage.getItem("gameai-scores-by-game") || "null") || {};

function gameScores() {
  const name = state.game ? state.game.name : "";
  if (!scoresByGame[name]) {
    scoresByGame[name] = { human: 0, ai: 0, draw: 0, autoX: 0, autoO: 0, autoDraw: 0 };
  }
  return scoresByGame[name];
}

async function api(path, body) {
  const options = body === undefined ? {} : {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body),
  };
  const response = await fetch(path, options);
  const data = await response.json();
  if (!response.ok) {
    const error = new Error(data.error ? data.error.message : response.statusText);
    error.status = response.status;
    error.winner = data.error ? data.error.winner : undefined;  // a finished game's
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
  if (movesPieces()) return state.side;
  const xs = state.cells.filter((c) => c === "X").length;
  const os = state.cells.filter((c) => c === "O").length;
  return xs === os ? "X" : "O";
}

// -- pieces that move: the server knows the rules -----------------------------------------

function movesPieces() {
  return !!(state.game && state.game.pieces);
}

function legalMoves() {
  // Every legal move of the side to move as {from, to} (from null for a placement), as
  // the server listed them for this position.
  return state.legal;
}

function applyMove(from, to, side) {
  clearHint();
  state.legal = [];  // until the server lists the next position's
  if (from !== null && from !== undefined) state.cells[from] = null;
  state.cells[to] = side;
  state.moves.push(to);
  const cells = state.game.rows * state.game.cols;
  state.actions.push(from === null || from === undefined ? to : cells + from * cells + to);
  if (!movesPieces()) return;
  state.side = side === "X" ? "O" : "X";
  const key = `${boardText()} ${state.side}`;
  const seen = (state.history.get(key) || 0) + 1;
  state.history.set(key, seen);
  state.repeated = seen >= 3;
}

function winningLine() {
  const g = state.game, dirs = [[0, 1], [1, 0], [1, 1], [1, -1]];
  if (movesPieces()) {
    // Shown where the game lists its lines (morris); its end is the server's to say.
    for (const line of g.lines || []) {
      const p = state.cells[line[0]];
      if (p && line.every((i) => state.cells[i] === p)) return { player: p, line };
    }
    return null;
  }
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
  if (values !== undefined) state.values = values;
  values = state.values;
  board.style.gridTemplateColumns = `repeat(${g.cols}, auto)`;
  if (board.children.length !== g.cells || board.dataset.game !== g.name) {
    board.replaceChildren();
    board.dataset.game = g.name;
    for (let i = 0; i < g.cells; i++) {
      const cell = document.createElement("button");
      cell.type = "button";
      cell.className = "cell";
      cell.dataset.index = i;
      cell.setAttribute("aria-label", placeText(i));
      cell.addEventListener("click", () => humanMove(i));
      cell.addEventListener("dragstart", (event) => {
        state.selected = i;
        event.dataTransfer.setData("text/plain", String(i));
        draw();
      });
      cell.addEventListener("dragover", (event) => {
        if (destinationOf(i)) event.preventDefault();
      });
      cell.addEventListener("drop", (event) => {
        event.preventDefault();
        humanMove(i);
      });
      board.appendChild(cell);
    }
  }
  const win = winningLine(), last = state.moves[state.moves.length - 1];
  const myTurn = !state.over && !state.busy && !state.autoplay && toMove() === state.human;
  const legal = movesPieces() && myTurn ? legalMoves() : [];
  for (const cell of board.children) {
    const i = Number(cell.dataset.index), piece = state.cells[i];
    cell.className = "cell" + (piece ? " " + piece : "") + (i === last ? " last" : "") +
      (win && win.line.includes(i) ? " win" : "") + (state.selected === i ? " selected" : "");
    cell.textContent = piece || "";
    cell.style.background = "";
    cell.dataset.value = "";
    cell.draggable = false;
    const v = cellValue(i, values);
    cell.title = "";
    const hinted = state.hint && state.hint.cells.get(i);
    if (hinted) {
      const label = document.createElement("span");
      label.className = "hint";
      label.textContent = hinted.label;
      cell.appendChild(label);
      if (hinted.best) cell.className += " hint-best";
      cell.dataset.hint = hinted.outcome;
    } else {
      delete cell.dataset.hint;
    }
    if (v === null) {
      // The model has no value for this move: say so, never paint it as a draw.
      cell.className += " unknown";
      cell.dataset.value = "unknown";
      cell.title = "unknown: the model has no value for this move";
      const label = document.createElement("span");
      label.className = "value";
      label.textContent = "?";
      cell.appendChild(label);
    } else if (v !== undefined) {
      cell.style.background = heat(v);
      cell.dataset.value = v;
      const label = document.createElement("span");
      label.className = "value";
      label.textContent = v.toFixed(2);
      cell.appendChild(label);
    }
    if (!movesPieces()) {
      cell.disabled = !!piece || !myTurn;
      continue;
    }
    const movable = legal.some((m) => m.from === i);
    cell.draggable = movable;
    cell.disabled = !(legal.some((m) => m.from === null && m.to === i) || movable ||
                      destinationOf(i));
  }
}

function cellValue(i, values) {
  // A placement's value shows on its point; a movement's on its destination (an empty
  // point, or the piece it captures) once its piece is selected, and each movable piece
  // shows the best of its own moves.
  if (!values) return undefined;
  if (!movesPieces()) return state.cells[i] ? undefined : values[i];
  const from = state.selected;
  const chosen = from !== null && from !== i ? values.movements[from] : undefined;
  if (chosen && chosen[i] !== undefined) return chosen[i];
  if (values.placements[i] !== undefined) return values.placements[i];
  const own = values.movements[i];
  if (!own) return undefined;
  const known = Object.values(own).filter((v) => v !== null);  // null: unknown
  return known.length ? Math.max(...known) : null;
}

function destinationOf(i) {
  // The move that takes the selected piece to point i (empty, or a piece it captures),
  // if it is legal.
  if (!movesPieces() || state.selected === null || state.selected === i) return null;
  if (state.over || state.busy || state.autoplay || toMove() !== state.human) return null;
  return legalMoves().find((m) => m.from === state.selected && m.to === i) || null;
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
  const scores = gameScores();
  $("score-game").textContent = state.game ? state.game.name : "";
  $("score-human").textContent = scores.human;
  $("score-ai").textContent = scores.ai;
  $("score-draw").textContent = scores.draw;
  $("auto-x").textContent = scores.autoX;
  $("auto-o").textContent = scores.autoO;
  $("auto-draw").textContent = scores.autoDraw;
  localStorage.setItem("gameai-scores-by-game", JSON.stringify(scoresByGame));
}

// -- play ------------------------------------------------------------------------------

function finish() {
  // The ends the board sees itself: a line or a full board (m,n,k), the third repetition
  // (pieces that move; their other ends come from the server: see refresh).
  if (state.over) {
    draw(null);
    return true;
  }
  const win = movesPieces() ? null : winningLine();
  const drawn = movesPieces() ? state.repeated : state.cells.every((c) => c);
  if (!win && !drawn) return false;
  endGame(win ? win.player : null);
  return true;
}

function endGame(winner) {
  // The game is over: won by winner ("X" or "O"), or drawn (null).
  const win = winner ? { player: winner } : null, drawn = !win;
  state.over = true;
  const why = movesPieces() && drawn ? " by repetition" : "";
  const scores = gameScores();
  if (state.autoplay) {
    if (!win) scores.autoDraw++; else if (win.player === "X") scores.autoX++; else scores.autoO++;
    setStatus(win ? `${win.player} wins (AI vs AI)` : `Draw${why} (AI vs AI)`);
  } else if (!win) {
    scores.draw++;
    setStatus(`Draw${why}. New game?`);
  } else if (win.player === state.human) {
    scores.human++;
    setStatus(`${win.player} wins: you beat the model!`);
  } else {
    scores.ai++;
    setStatus(`${win.player} wins: the model won.`);
  }
  showScores();
  draw(null);
}

async function refresh() {
  // After every move: the end of the game, the heat map, then the AI's turn if it is one.
  if (finish()) {
    state.busy = false;
    return;
  }
  const token = state.token;
  let values;
  if ($("heatmap").checked || movesPieces()) {  // pieces that move: the legal moves too
    try {
      const e = await api(`/v1/games/${state.game.name}/evaluate`,
                          position({ model: $("model").value }));
      if (token !== state.token) return;
      state.legal = e.moves.map((m) => ({ from: m.from ? m.from.index : null, to: m.index }));
      values = movesPieces() ? { placements: {}, movements: {} } : {};
      for (const m of e.moves) {
        const value = m.unknown ? null : m.value;  // null: the model has no value for it
        if (!movesPieces()) {
          values[m.index] = value;
        } else if (m.from) {
          (values.movements[m.from.index] ||= {})[m.index] = value;
        } else {
          values.placements[m.index] = value;
        }
      }
      $("answered-by").textContent = [state.played, `values from model version ${e.model_version}`]
        .filter(Boolean).join(" · ");
      if (!$("heatmap").checked) values = undefined;
    } catch (error) {
      if (token !== state.token) return;
      if (error.winner !== undefined) {  // the server says the game is over, and who won
        state.busy = false;
        endGame(error.winner);
        return;
      }
      setStatus(error.message, true);
    }
  }
  state.busy = false;
  draw(values || null);
  if (state.autoplay || toMove() !== state.human) {
    await aiMove(token, values);
  } else {
    setStatus(`Your move (${state.human})`);
  }
}

function unknownMove(values, from, to) {
  // Whether the evaluation just shown had no value for this move.
  if (!values) return false;
  if (!movesPieces()) return values[to] === null;
  if (from === null) return values.placements[to] === null;
  return (values.movements[from] || {})[to] === null;
}

async function aiMove(token, values) {
  state.busy = true;
  setStatus(`The model is thinking (${toMove()})…`);
  try {
    if (state.autoplay) await new Promise((ok) => setTimeout(ok, 250));
    const a = await api(`/v1/games/${state.game.name}/best-move`,
                        position({ model: $("model").value, client_id: clientId(),
                                   level: $("level").value || "best", seed: state.seed }));
    if (token !== state.token) return;
    const mover = toMove(), from = a.move.from ? a.move.from.index : null;
    state.selected = null;
    applyMove(from, a.move.index, mover);
    // an exact move's value is its proof's: 1 a win for the mover, 0 a draw, -1 a loss
    const proved = a.value > 0 ? "win" : a.value < 0 ? "loss" : "draw";
    const worth = a.exact ? `proved ${proved} for ${mover}`
      : unknownMove(values, from, a.move.index)
        ? "value unknown: the model never learned this position" : `value ${a.value.toFixed(2)}`;
    state.played =
      `model version ${a.model_version} played ${mover} ${moveText(a.move)} at level ` +
      `${a.level} (${worth})`;
    $("answered-by").textContent = state.played;
  } catch (error) {
    if (token === state.token) setStatus(error.message, true);
    state.busy = false;
    return;
  }
  state.busy = false;
  await refresh();
}

function position(fields) {
  // The request's position: the board, and for pieces that move whose turn it is.
  const body = { board: boardText(), ...fields };
  if (movesPieces()) body.to_move = toMove();
  return body;
}

function humanMove(index) {
  if (state.over || state.busy || state.autoplay || toMove() !== state.human) return;
  if (movesPieces()) {
    humanMorris(index);
    return;
  }
  const cell = target(index);
  if (cell < 0) return;
  applyMove(null, cell, state.human);
  state.busy = true;
  setStatus("The model is thinking…");
  draw(null);
  refresh();
}

function humanMorris(index) {
  // A placement by a click; a movement by clicking a piece and then a point (or dragging).
  const legal = legalMoves();
  let move = legal.find((m) => m.from === null && m.to === index) || destinationOf(index);
  if (!move) {
    state.selected = legal.some((m) => m.from === index) && state.selected !== index
      ? index : null;
    draw();
    return;
  }
  state.selected = null;
  applyMove(move.from, move.to, state.human);
  state.busy = true;
  setStatus("The model is thinking…");
  draw(null);
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
  showScores();  // this game's results
  // the game's start ("start" in GET /v1/games: the empty board but for games that start
  // with pieces on it)
  const start = (state.game.start || "").replace(/\|/g, "");
  state.cells = Array.from({ length: state.game.rows * state.game.cols },
                           (_, i) => (start[i] === "X" || start[i] === "O" ? start[i] : null));
  state.game.cells = state.cells.length;
  state.moves = [];
  state.actions = [];
  $("review-panel").hidden = true;
  state.over = false;
  state.busy = false;
  state.side = "X";
  state.selected = null;
  state.legal = [];
  state.values = null;
  state.repeated = false;
  state.history = new Map([[`${boardText()} X`, 1]]);
  state.autoplay = !!autoplay;
  state.human = $("side").value;
  state.played = "";
  state.seed = Math.floor(Math.random() * 2 ** 31);  // this game's choices, repeatable
  clearHint();
  $("answered-by").textContent = "";
  refresh();
}

// -- levels of play ----------------------------------------------------------------------

async function loadLevels() {
  const select = $("level"), wanted = localStorage.getItem("gameai-level") || "";
  try {
    const listing = await api(`/v1/games/${$("game").value}/levels`);
    state.levels = listing.levels;
    state.served = listing;  // the served version and its own judged strength
    select.replaceChildren();
    for (const level of listing.levels) {
      const option = new Option(level.name, level.name);
      option.title = level.summary || level.description;
      select.add(option);
    }
    const names = listing.levels.map((level) => level.name);
    select.value = names.includes(wanted) ? wanted : listing.default;
  } catch (error) {
    setStatus(error.message, true);
  }
  showLevel();
}

function showLevel() {
  // The chosen level in words, with its measured strength where the game was calibrated.
  const level = state.levels.find((l) => l.name === $("level").value);
  if (!level) {
    $("level-info").textContent = "";
    return;
  }
  // Only the served version's own figures are shown as its own: a calibration made with
  // another model says so (the server's summary names that model).
  const served = state.served || {};
  let measured = "Its strength has not been measured for this game.";
  if (level.summary && level.calibration_applies !== false) {
    measured = `Measured: it ${level.summary}.`;
  } else if (level.summary) {
    measured = `${level.summary[0].toUpperCase()}${level.summary.slice(1)}.`;
  }
  const own = served.served_strength
    ? ` Version ${served.served_version} served now, ${served.served_strength}.` : "";
  $("level-info").textContent = `${level.name}: ${level.description}. ${measured}${own}`;
}

// -- hints ---------------------------------------------------------------------------------

function clearHint() {
  state.hint = null;
  $("hints").hidden = true;
}

function exactScore(m) {
  // Orders moves as perfect play does: the fastest win, then draws, then the slowest loss.
  if (m.outcome === "win") return 1000 - m.distance;
  if (m.outcome === "loss") return -1000 + m.distance;
  return 0;
}

function outcomeText(m) {
  if (m.outcome === "win") return `wins in ${m.distance}`;
  if (m.outcome === "loss") return `loses in ${m.distance}`;
  return m.outcome === "draw" ? "draws" : "unknown";
}

// One numbering for people, the one the moves notation uses: gravity games by their
// column from 1 at the left; games whose pieces move by their point, 1-9 row by row from the
// top left; other boards by row and column from 1, as drawn (top row first).
function placeText(index) {
  const g = state.game, row = Math.floor(index / g.cols) + 1, col = (index % g.cols) + 1;
  if (g.gravity) return `column ${col}`;
  if (movesPieces()) return `point ${index + 1}`;
  return `row ${row}, column ${col}`;
}

function moveText(m) {
  const to = placeText(m.index);
  return m.from ? `${placeText(m.from.index)} to ${to}` : to;
}

async function showHint() {
  if (state.over || state.busy || state.autoplay || toMove() !== state.human) {
    setStatus("A hint is for your move: wait for your turn.", true);
    return;
  }
  const token = state.token;
  let a;
  try {
    a = await api(`/v1/games/${state.game.name}/analyze`, position({ model: $("model").value }));
  } catch (error) {
    setStatus(error.message, true);
    return;
  }
  if (token !== state.token || toMove() !== state.human) return;
  const solved = a.outcome !== null;
  const best = solved ? Math.max(...a.moves.map(exactScore)) : null;
  const moves = solved ? a.moves.slice().sort((p, q) => exactScore(q) - exactScore(p)) : a.moves;
  const cells = new Map(), list = $("hint-moves");
  list.replaceChildren();
  for (const m of moves) {
    const optimal = solved && exactScore(m) === best;
    const item = document.createElement("li");
    const value = `model value ${m.unknown ? "unknown" : m.value.toFixed(2)}`;
    item.textContent = `${moveText(m)}: ` + (solved ? `${outcomeText(m)} (${value})` : value);
    if (optimal) item.className = "best";
    list.appendChild(item);
    if (solved && !m.from) {
      const short = m.outcome === "win" ? `W${m.distance}` : m.outcome === "loss" ? `L${m.distance}` : "D";
      cells.set(m.index, { label: short, best: optimal, outcome: m.outcome });
    }
  }
  const you = `you (${a.to_move})`;
  const plies = " (counting the moves of both players, this one included)";
  $("hint-summary").textContent = solved
    ? `With perfect play from here ${you} ` +
      (a.outcome === "win" ? `win in ${a.distance}${plies}` : a.outcome === "loss"
        ? `lose in ${a.distance}${plies}` : "draw") + ". Best moves first:"
    : `${a.unsolved} The model's values, best first:`;
  const other = a.to_move === "X" ? "O" : "X";
  const line = a.line.map((m, i) => `${i % 2 === 0 ? a.to_move : other} ${moveText(m)}`);
  $("hint-line").textContent = `The model expects: ${line.join(", ")}; ${a.line_end}.`;
  state.hint = { cells };
  $("hints").hidden = false;
  draw();
}

async function loadModels() {
  const select = $("model"), game = $("game").value;
  select.replaceChildren(new Option("production (with canary share)", ""));
  $("pin").textContent = "";
  $("shadow").textContent = "";
  try {
    const listing = await api(`/v1/games/${game}/models`);
    if (listing.shadow) {
      $("shadow").textContent = `Shadow test at ${listing.shadow.share}% of production's ` +
        `best-move queries (never answered with): ${listing.shadow.summary}.`;
    }
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

// -- review: the game judged move by move --------------------------------------------------

async function showReview() {
  if (!state.actions.length) {
    setStatus("Play a move first: the review judges the moves of the game.", true);
    return;
  }
  const token = state.token;
  try {
    const r = await api(`/v1/games/${state.game.name}/review`,
                        { actions: state.actions, model: $("model").value,
                          client_id: clientId() });
    if (token !== state.token) return;
    drawReview(r);
  } catch (error) {
    setStatus(error.message, true);
  }
}

function markOf(judgment) {
  if (BAD.includes(judgment)) return "bad";
  return judgment === "mistake" ? "poor" : "";
}

function drawReview(r) {
  // The model's value for X before the first move and after each move, a mark per move.
  const svg = $("review-graph"), ns = "http://www.w3.org/2000/svg";
  const width = 600, height = 200, pad = 12;
  const n = r.plies.length;
  const x = (i) => pad + (i * (width - 2 * pad)) / Math.max(n, 1);
  const y = (v) => height / 2 - (v * (height / 2 - pad));
  const forX = (p, v) => (p.side === "X" ? v : -v);
  const values = [forX(r.plies[0], r.plies[0].value_before),
                  ...r.plies.map((p) => forX(p, p.value_after))];
  const el = (name, attrs) => {
    const e = document.createElementNS(ns, name);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    return e;
  };
  svg.replaceChildren(el("line", { class: "axis", x1: pad, x2: width - pad,
                                   y1: y(0), y2: y(0) }));
  svg.append(el("polyline", { class: "line",
                              points: values.map((v, i) => `${x(i)},${y(v)}`).join(" ") }));
  const list = $("review-plies");
  list.replaceChildren();
  r.plies.forEach((p, i) => {
    const mark = markOf(p.judgment);
    const dot = el("circle", { class: `mark ${mark}`.trim(), cx: x(i + 1), cy: y(values[i + 1]),
                               r: mark ? 6 : 3, "data-ply": p.ply,
                               "data-judgment": p.judgment });
    const title = el("title", {});
    title.textContent = `${p.ply}. ${p.side} ${moveText(p.move)}: ${JUDGED[p.judgment]}`;
    dot.append(title);
    svg.append(dot);
    const item = document.createElement("li");
    if (mark) item.className = mark;
    const better = p.judgment === "best" ? "" : ` (best: ${moveText(p.best)})`;
    const exact = p.exact ? `; perfect play: ${p.exact.before} before, ${p.exact.after} after` : "";
    item.textContent = `${p.side} ${moveText(p.move)}: ${JUDGED[p.judgment]}, loses ` +
      `${p.loss.toFixed(2)}${better}${exact}`;
    list.append(item);
  });
  const names = { blunder: ["blunder", "blunders"], mistake: ["mistake", "mistakes"],
                  inaccuracy: ["inaccuracy", "inaccuracies"] };
  const count = (s) => Object.entries(names)
    .map(([j, [one, many]]) => `${s[j]} ${s[j] === 1 ? one : many}`).join(", ");
  const proofs = (s) => s.throws_away_win + s.walks_into_loss;
  $("review-summary").textContent = r.sides.map((s) => `${s.side}: ${count(s)}` +
    (proofs(s) ? `, ${proofs(s)} proved losing` : "")).join("; ") +
    ` (model version ${r.model_version}; ${r.proved} of ${n} moves proved by the solver).`;
  $("review-panel").hidden = false;
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
    await loadLevels();
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
    await loadLevels();
  } else {
    setStatus("No game has a model yet: the trainers are still learning.", true);
  }
  showScores();
  $("game").addEventListener("change", async () => {
    // A game started while the new game's models and levels load (AI vs AI pressed at
    // once, or a second switch) is newer than this one: it stays. So does a game the
    // player went on with meanwhile: choosing the game already shown and playing a move
    // at once must not see the move undone when the loads end.
    const token = state.token, played = state.moves.length;
    await loadModels();
    await loadLevels();
    const sameGame = state.game && state.game.name === $("game").value;
    if (token === state.token && !(sameGame && state.moves.length !== played)) newGame(false);
  });
  $("level").addEventListener("change", () => {
    localStorage.setItem("gameai-level", $("level").value);
    showLevel();
    newGame(false);
  });
  $("hint").addEventListener("click", showHint);
  $("review").addEventListener("click", showReview);
  $("model").addEventListener("change", () => newGame(false));
  $("side").addEventListener("change", () => newGame(false));
  $("new-game").addEventListener("click", () => newGame(false));
  $("autoplay").addEventListener("click", () => newGame(true));
  $("heatmap").addEventListener("change", () => { if (!state.busy) refresh(); });
  $("reset-scores").addEventListener("click", () => {
    const scores = gameScores();
    for (const key of Object.keys(scores)) scores[key] = 0;
    showScores();
  });
  if (playable) newGame(false);
}

start();
