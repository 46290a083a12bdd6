// SPDX-License-Identifier: MIT
// Why odeSD has no predictor–corrector distance guard (issue 29, item 2). BIOMD0000000009 at
// atol 0.25 (its amounts' former 1e-12 mol, ~20 % of the largest state) leaves the physical
// region near t = 15.7 with the cubic stiff predictor and Newton then fails after every growth
// of h (450960 steps without the failure-load hand-over). A guard that rejects steps whose
// corrector lands far from the predictor (‖x_{n+1} − x_pred‖ in the error test's weights, alone
// or against ‖ε‖) would have to fire there. The distances measured here say it cannot: the step
// that leaves moves 7.3 tolerances from its predictor, while healthy runs of PEtab models at the
// default tolerances move up to 10³ past their first steps (stiff steps with the x-only
// predictor), so any bound that catches the departure rejects ordinary stiff steps. The
// quadratic predictor leaves at the same place (and blows up at t = 15.84): there is no other
// root to guard against, only a tolerance that does not control these states.
#include <QtTest/QtTest>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <vector>

#include "core/integrators/odesd_integrator.h"
#include "core/model/sbml_importer.h"
#include "core/symbolic/compiled_model.h"
#include "core/symbolic/ode_system.h"

using namespace sensode;
using sensode::integrators::IntegratorOptions;
using sensode::integrators::OdeSdIntegrator;
using sensode::integrators::OdeSdOptions;

namespace {

const std::filesystem::path kShared = SENSODE_SHARED_DIR;

struct Trace {
  double maxDistance = 0;        // over the accepted steps after the 10th
  double departureTime = -1;     // first step ending with a state below `floor`
  double departureDistance = 0;  // its predictor–corrector distance
  double departureError = 0;     // and its ‖ε‖
};

Trace trace(const std::filesystem::path& file, double atol, double tEnd, double floor,
            int stiffPredictorDegree) {
  auto model = std::make_shared<const symbolic::CompiledModel>(
      symbolic::buildOdeSystem(model::importSbmlFile(file)));
  const std::vector<double> p = model->nominalParameters();
  std::vector<double> x(static_cast<std::size_t>(model->nx()));
  model->initialState(0, p.data(), x.data());
  IntegratorOptions o;
  o.atol = atol;
  OdeSdOptions sd;
  sd.failureHandoverLoad = 0;  // the run as the odesd-newton pass left it
  sd.maxBridges = 0;
  sd.stiffPredictorDegree = stiffPredictorDegree;
  OdeSdIntegrator odesd;
  odesd.setOdeSdOptions(sd);
  Trace r;
  long steps = 0;
  odesd.setStepObserver([&](const integrators::OdeSdStepInfo& s) {
    if (++steps > 10) r.maxDistance = std::max(r.maxDistance, s.predictorDistance);
    const double lowest = *std::min_element(s.xEnd.begin(), s.xEnd.end());
    if (r.departureTime < 0 && lowest < floor) {
      r.departureTime = s.t;
      r.departureDistance = s.predictorDistance;
      r.departureError = s.error;
    }
  });
  odesd.initialize(model, o, 0, x, p);
  try {
    // Output times 1, 2, … as the time course task asks (the steps depend on them: dense
    // output never shortens a step, but the last one before tEnd lands on it).
    for (int k = 1; k <= static_cast<int>(tEnd); ++k) odesd.advanceTo(k, x, {});
  } catch (const std::exception& e) {
    qInfo("%s", e.what());  // the quadratic predictor's blow-up
  }
  return r;
}

}  // namespace

class TestOdeSdPredictorDistance : public QObject {
  Q_OBJECT

 private slots:
  void departureIsNotAFarRoot() {
    const auto biomd9 = kShared / "biomodels/BIOMD0000000009.xml";
    const auto boehm = kShared / "petab/Boehm_JProteomeRes2014/model_Boehm_JProteomeRes2014.xml";
    if (!std::filesystem::exists(biomd9) || !std::filesystem::exists(boehm)) {
      QSKIP("shared models not found");
    }
    // Amounts in a 4e-12 l compartment: −1e-11 mol is a concentration of −2.5.
    for (int degree : {3, 2}) {
      const Trace leaving = trace(biomd9, 0.25, 16, -1e-11, degree);
      qInfo("degree %d: leaves at t = %.4g, distance %.3g, error %.3g", degree,
            leaving.departureTime, leaving.departureDistance, leaving.departureError);
      QVERIFY(leaving.departureTime > 15.4 && leaving.departureTime < 16);
      QVERIFY(leaving.departureDistance < 20);
    }
    const Trace healthy = trace(boehm, 1e-12, 100, -1e300, 3);
    qInfo("Boehm: largest distance after the 10th step %.3g", healthy.maxDistance);
    QVERIFY(healthy.maxDistance > 100);
  }
};

QTEST_GUILESS_MAIN(TestOdeSdPredictorDistance)
#include "tst_odesd_predictor_distance.moc"
