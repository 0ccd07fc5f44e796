// How many workers' reports of one job and interval have come from one session, and how many it
// owes. A worker's session carries its own report; a relay's carries many merged, the first
// when the relay's grace for the interval ended (IntervalReport.reports_carried of the
// reports_owed then), the rest in later reports of the same interval. The controller and a relay
// above another both count the interval complete only when every report owed is in: counting
// sessions instead, an interval went out "complete" with 20 of 20 relays in and a sixth of the
// workers' operations (10,000 simulated workers behind 20 relays; the rest came as amendments).
#ifndef IOFLEET_CONTROLLER_CARRIED_REPORTS_H_
#define IOFLEET_CONTROLLER_CARRIED_REPORTS_H_

#include <algorithm>
#include <cstdint>

#include "proto/worker_service.pb.h"

namespace iofleet {

// The workers a session stands for, from the workers it relays (0: a worker's own session).
inline uint32_t SessionWorkers(uint32_t relayed) { return std::max<uint32_t>(relayed, 1); }

struct CarriedReports {
  uint32_t carried = 0;  // workers' reports in so far
  uint32_t owed = 0;     // reports owed for the interval, as the session's first report said
  bool in = false;       // the session has reported the interval

  // Counts `report` from a session that relays `relayed` workers (0: a worker's own session);
  // returns the workers' reports it carries. A worker's first report of the interval is its own
  // (1); anything more it sends of the interval, and a relay's report without directions (its
  // final), carries none. A relay that says nothing of it (one built before 2026-12-02) is
  // taken to carry all of its workers' in its first report, as it was then.
  // What a relay says is taken at most up to its workers: a relay of N carries and owes at most
  // N reports of an interval, whatever its reports claim.
  uint32_t Add(const v1::IntervalReport& report, uint32_t relayed) {
    const bool relay = relayed > 0;
    uint32_t reports = relay ? std::min(report.reports_carried(), relayed > carried ? relayed - carried : 0) : in ? 0 : 1;
    if (relay && !in && reports == 0 && report.reports_owed() == 0) reports = relayed;
    if (!in) owed = relay ? std::min(relayed, std::max(report.reports_owed(), reports)) : 1;
    in = true;
    carried += reports;
    return reports;
  }
  // What the session stands for in the interval: the reports owed, or more if more came.
  uint32_t expected() const { return std::max(owed, carried); }
};

}  // namespace iofleet

#endif  // IOFLEET_CONTROLLER_CARRIED_REPORTS_H_
