// The viewer's panels: one file each (viz/ui/<name>_panel.cc), each a Draw function over the
// runs and the view state (docs/STYLE.md: Tracy's TracyView_<Panel>.cpp), and the view cache
// for those that keep derived data between frames (viz/ui/view_cache.h). A panel draws into the
// current ImGui window: the caller (DrawViewer) opens the window, so the same Draw works in the
// full layout, alone in a screenshot, and in tests with a bare ImGui context. Panels read the
// immutable models and change only `state` and `cache`; they keep nothing else.
#pragma once

#include "viz/ui/view_cache.h"
#include "viz/ui/view_state.h"

namespace ksim::viz {

// Brokers as cards: alive, crashed or shut down, controller badge, ZooKeeper session, faults
// (slow, isolated, disk); the network cuts in force drawn between them; clients alongside.
void DrawClusterPanel(const Runs& runs, ViewState& state);

// Every partition (the selected one expanded): each replica's log as a strip of cells coloured
// by producer and record, LEO and HW markers, leader, ISR membership and leader epoch; cells
// truncated shortly before the playhead shown leaving.
void DrawPartitionsPanel(const Runs& runs, ViewState& state, ViewCache& cache);

// Overview strip of the whole run (a minimap) with faults and anomalies coloured, the zoomed
// window with event ticks, play/pause/step/speed, a draggable playhead, jump to the next or
// previous event of a kind; keyboard: Space play/pause, Left/Right step, Shift+Left/Right
// previous/next event of the chosen kind, +/- zoom, Home/End.
void DrawTimelinePanel(const Runs& runs, ViewState& state, ViewCache& cache);

// Sequence (Lamport) diagram of the network messages in the window: one lifeline per node,
// arrows from send to delivery (drops ending in a cross; ZooKeeper's traffic when
// state.show_zookeeper), with HW advances, records becoming committed and offset commits marked.
void DrawMessagesPanel(const Runs& runs, ViewState& state, ViewCache& cache);

// Every record with its fate (acked, copies in the final log, deliveries per group): lost in
// red, duplicated in orange; a click selects the record, moves the playhead to its first event
// and shows the cause the checker attributed and the record's events (each a jump).
void DrawLedgerPanel(const Runs& runs, ViewState& state, ViewCache& cache);

// The runs (variants) side by side at the playhead: metrics, expectations, each run's fates as
// a bar of records (lost / duplicated / fine) and the selected partition's logs.
void DrawComparePanel(const Runs& runs, ViewState& state);

// The scenario: description, actions (done ones ticked at the playhead), expectations and
// whether they held, the verdict.
void DrawScenarioPanel(const Runs& runs, ViewState& state);

// The whole viewer for one frame: a menu bar (run selector, panel toggles) and every shown panel
// in its window, laid out to fill the display (ImGui::GetIO().DisplaySize). Calls
// state.Tick with io.DeltaTime. `cache` is this viewer's (one per ViewState).
// REQUIRES: between ImGui::NewFrame and ImGui::Render.
void DrawViewer(const Runs& runs, ViewState& state, ViewCache& cache);

}  // namespace ksim::viz
