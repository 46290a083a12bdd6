// SPDX-License-Identifier: MIT
// The Parameter sensitivities task and its five methods (odeSD direct, CVODES forward, PBSR,
// Exp, central finite differences) on:
//   - closed forms: NUMERICS.md §7.5's random linear n = 10 system (exact S), Linear2 (exact S),
//     A ⇄ B conversion (analytic S, singular J, a species-initial-value parameter), a
//     compartment size moving concentrations three ways (analytic S, exact zeros);
//   - NUMERICS.md §11's S references (Michaelis–Menten, Robertson T = 40, Chua,
//     repressilator);
//   - every method against a tight CVODES forward reference (rtol 1e-10) on SBML Test Suite
//     cases (local parameters, assignment rules depending on parameters, initial assignments)
//     and PEtab models (Boehm, Fujita), outputs through the chain rule;
//   - scaled vs unscaled, guards, errors and cancellation. The PBSR/Exp propagators' own tests
//     are in tst_sensitivity_propagators.cpp, the CLI's in tst_sensitivities_cli.cpp, the
//     options that change a method (error control, correctors, step callback, trajectory) in
//     tst_sensitivity_method_options.cpp.
// Tolerances are per method and state the measured errors they were set from.

#include "support/sensitivity_fixtures.h"

class TestSensitivities : public QObject {
  Q_OBJECT

 private slots:
  // ---- options, names ----

  void defaultOptionsAreValid() {
    QVERIFY(!SensitivityOptions{}.validate().has_value());
    QVERIFY(!sensitivity::PeanoBakerOptions{}.validate().has_value());
  }

  void invalidOptionsNameFieldValueAndConstraint() {
    SensitivityOptions o;
    o.fdRelativeStep = -1;
    QCOMPARE(QString::fromStdString(o.validate().value()),
             QString("SensitivityOptions::fdRelativeStep = -1. Violated constraint: 0 < "
                     "fdRelativeStep < 0.5"));
    o = {};
    o.integrator.rtol = 0;
    QVERIFY(o.validate().value().find("IntegratorOptions::rtol") != std::string::npos);
    o = {};
    o.peanoBaker.maxSubintervals = 0;
    QVERIFY(o.validate().value().find("maxSubintervals") != std::string::npos);
    o = {};
    o.peanoBaker.mergeTolerance = -1;
    QCOMPARE(QString::fromStdString(o.validate().value()),
             QString("PeanoBakerOptions::mergeTolerance = -1. Violated constraint: 0 <= "
                     "mergeTolerance < inf"));
    o = {};
    o.fdRtol = std::nan("");
    QVERIFY(o.validate().value().find("fdRtol") != std::string::npos);
  }

  void methodNamesRoundTrip() {
    for (const auto m : {SensitivityMethod::OdeSd, SensitivityMethod::Cvodes,
                         SensitivityMethod::Pbsr, SensitivityMethod::Exp,
                         SensitivityMethod::FiniteDifferences}) {
      QCOMPARE(tasks::sensitivityMethodFromString(tasks::toString(m)).value(), m);
    }
    QCOMPARE(tasks::sensitivityMethodFromString("EXP").value(), SensitivityMethod::Exp);
    QVERIFY(!tasks::sensitivityMethodFromString("adjoint").has_value());
  }

  // ---- the exponential formula (NUMERICS.md §7.3) ----


  // ---- closed forms through the task ----

  void randomLinearSystem_data() {
    QTest::addColumn<SensitivityMethod>("method");
    QTest::addColumn<double>("tolerance");  // column-relative error of S at every output time
    // Measured (rtol 1e-8, atol 1e-12, 11 outputs over [0, 10]): cvodes 5.3e-9, odesd 3.0e-9,
    // exp and pbsr 1.1e-14 (constant Jacobians: the switch chooses the exact exponential formula
    // on every interval), fd 6.8e-5 in the column of p1 = 0.0037 (its step δ = 3.7e-7 moves x by
    // ~4e-9, close to the integration noise of the two runs).
    addMethodRows("", {{SensitivityMethod::Cvodes, 1e-7},
                       {SensitivityMethod::OdeSd, 1e-7},
                       {SensitivityMethod::FiniteDifferences, 3e-4},
                       {SensitivityMethod::Exp, 1e-12},
                       {SensitivityMethod::Pbsr, 1e-12}});
  }
  void randomLinearSystem() {
    QFETCH(SensitivityMethod, method);
    QFETCH(double, tolerance);
    const RandomLinear d = randomLinearData(10);
    const auto times = linspace(0, 10, 11);
    const SensitivityResult r = run(randomLinearModel(d), method, times, 1e-8, 1e-12);
    REQUIRE_SUCCESS(r);
    double worst = 0;
    for (std::size_t it = 1; it < times.size(); ++it) {
      keepWorst(worst, columnRelativeError(stateS(r, it), randomLinearExactS(d, times[it])));
    }
    qInfo("%s: worst column-relative error of S %.2e", tasks::toString(method), worst);
    SENSODE_EXPECT_CLOSE(worst, 0, tolerance, 0, "column-relative error", 0);
    const std::size_t last = times.size() - 1;
    SENSODE_EXPECT_CLOSE(r.stateAt(last, 9, 9), 5.2350295626, 0, std::max(tolerance, 1e-9),
                         "S[9,9](10)", 0);
    if (method == SensitivityMethod::Pbsr) {
      QCOMPARE(r.stats.peanoBaker.refinedIntervals, 0L);
      QVERIFY(r.stats.peanoBaker.exponentialSteps > 0);
    }
  }

  void linear2Exact_data() {
    QTest::addColumn<SensitivityMethod>("method");
    QTest::addColumn<double>("tolerance");
    // Measured at rtol 1e-8 (column-relative error at T = 10 against the exact S): cvodes
    // 1.2e-7, odesd 6.1e-7, fd 6.0e-4 (column p0: y0 ≈ 4.5e-8 sits on a stiff slow manifold and
    // moves by 1e-4 relative per step), exp = pbsr 1.6e-2 (n_int > 100 everywhere, so PBSR is
    // Exp): the stiff component of S tracks −A⁻¹B(t), and the midpoint B lags the interval end
    // by Δt/2 — the exponential midpoint rule's order reduction on stiff problems, in column p0).
    addMethodRows("", {{SensitivityMethod::Cvodes, 5e-6},
                       {SensitivityMethod::OdeSd, 5e-6},
                       {SensitivityMethod::FiniteDifferences, 2e-3},
                       {SensitivityMethod::Exp, 5e-2},
                       {SensitivityMethod::Pbsr, 5e-2}});
  }
  void linear2Exact() {
    QFETCH(SensitivityMethod, method);
    QFETCH(double, tolerance);
    const SensitivityResult r = run(linear2Model(), method, {0.0, 1.0, 10.0}, 1e-8, 1e-14);
    REQUIRE_SUCCESS(r);
    Eigen::MatrixXd exact(2, 2);
    exact << -4.5490866004e-11, -4.0896288537e-7, 0, -4.5399929762e-4;
    const double err = columnRelativeError(stateS(r, 2), exact);
    qInfo("%s: Linear2 column-relative error %.2e", tasks::toString(method), err);
    SENSODE_EXPECT_CLOSE(err, 0, tolerance, 0, "Linear2 S(10)", 0);
  }

  void conversionAnalytic_data() {
    QTest::addColumn<SensitivityMethod>("method");
    QTest::addColumn<double>("tolerance");
    // A ⇄ B: J is singular (A + B conserved), A0 is a species-initial parameter (S0 ≠ 0).
    // Measured at rtol 1e-8 (worst column-relative error over 21 outputs on [0, 5]): cvodes
    // 3.4e-8, odesd 4.6e-8, fd 5.3e-7, exp 1.0e-4, pbsr 7.2e-4.
    addMethodRows("", {{SensitivityMethod::Cvodes, 1e-6},
                       {SensitivityMethod::OdeSd, 1e-6},
                       {SensitivityMethod::FiniteDifferences, 3e-6},
                       {SensitivityMethod::Exp, 5e-4},
                       {SensitivityMethod::Pbsr, 3e-3}});
  }
  void conversionAnalytic() {
    QFETCH(SensitivityMethod, method);
    QFETCH(double, tolerance);
    const auto times = linspace(0, 5, 21);
    const SensitivityResult r = run(conversionModel(), method, times, 1e-8, 1e-12);
    REQUIRE_SUCCESS(r);
    // S0 from the initial value: ∂A(0)/∂A0 = 1.
    SENSODE_EXPECT_CLOSE(r.stateAt(0, 0, 2), 1.0, 0, 0, "S0 A/A0", 0);
    double worst = 0;
    for (std::size_t it = 1; it < times.size(); ++it)
      keepWorst(worst, columnRelativeError(stateS(r, it), conversionExactS(times[it])));
    qInfo("%s: A<->B worst column-relative error %.2e", tasks::toString(method), worst);
    SENSODE_EXPECT_CLOSE(worst, 0, tolerance, 0, "A <-> B", 0);
  }

  // ---- NUMERICS.md §11 references ----

  void numericsReferences_data() {
    QTest::addColumn<QString>("problem");
    QTest::addColumn<SensitivityMethod>("method");
    QTest::addColumn<double>("tolerance");  // column-relative error of S(T) vs the reference
    // Measured column-relative errors at rtol 1e-8, atol 1e-12 (Robertson atol 1e-14); PBSR and
    // Exp on the CVODES grid of the same run (416, 472, 579, 1965 intervals):
    //                 cvodes   odesd    fd       exp      pbsr
    //   MM            1.5e-8   3.7e-8   2.8e-7   7.7e-5   2.6e-4
    //   Robertson 40  6.7e-8   3.8e-8   9.4e-8   3.1e-6   3.1e-6
    //   Chua          9.4e-7   1.0e-6   1.9e-7   1.8e-4   1.0e-3
    //   repressilator 7.3e-8   2.1e-7   3.3e-5   1.1e-2   4.0e-4
    // PBSR's error is set by its refinement rule (Δt_sub·‖A‖₁ ≈ 0.1) and does not shrink with
    // rtol; Exp-midpoint is second order in the grid's Δt, so it wins on fine grids (MM, Chua)
    // and loses on the oscillator, whose Jacobian rotates within each step. FD (δ = 1e-4·p,
    // rtol 1e-12) on the repressilator: truncation δ²·S''' with S growing secularly.
    struct Row {
      const char* problem;
      double cvodes, odesd, fd, exp, pbsr;
    };
    for (const Row& row : {Row{"mm", 1e-6, 1e-6, 2e-6, 3e-4, 1e-3},
                           Row{"robertson", 1e-6, 1e-6, 1e-6, 2e-5, 2e-5},
                           Row{"chua", 1e-5, 1e-5, 2e-6, 1e-3, 5e-3},
                           Row{"repressilator", 2e-6, 2e-6, 2e-4, 5e-2, 2e-3}}) {
      for (const auto& [method, tol] :
           {std::pair{SensitivityMethod::Cvodes, row.cvodes}, {SensitivityMethod::OdeSd, row.odesd},
            {SensitivityMethod::FiniteDifferences, row.fd}, {SensitivityMethod::Exp, row.exp},
            {SensitivityMethod::Pbsr, row.pbsr}}) {
        QTest::newRow((std::string(row.problem) + "/" + tasks::toString(method)).c_str())
            << QString(row.problem) << method << tol;
      }
    }
  }
  void numericsReferences() {
    QFETCH(QString, problem);
    QFETCH(SensitivityMethod, method);
    QFETCH(double, tolerance);
    Model model;
    double tEnd = 0, atol = 1e-12;
    Eigen::MatrixXd ref;
    std::vector<std::string> rows;  // reference rows (state ids)
    if (problem == "mm") {
      model = michaelisMentenModel();
      tEnd = 10;
      ref = michaelisMentenReferenceAt10();
    } else if (problem == "robertson") {
      model = robertsonModel();
      tEnd = 40;
      atol = 1e-14;
      ref.resize(3, 3);
      ref << -4.24755877, 1.37308080e-5, -2.28835509e-9, 4.59119625e-5, -2.35719211e-10,
          -1.13805951e-13, 4.24751286, -1.37305723e-5, 2.28846889e-9;
    } else if (problem == "chua") {
      model = chuaModel();
      tEnd = 10;
      ref.resize(3, 2);
      ref << 3.19560574e-2, -1.04331856e-1, -8.00466848e-2, -4.77291055e-2, -2.81654975e-1,
          1.40961061e-1;
    } else {
      model = repressilatorModel();
      tEnd = 50;
      ref.resize(2, 4);  // rows m1, m2
      ref << -2.62427316, 7.20869419e-3, -6.57122211e-1, 7.30467933, 6.81515713e2,
          -1.01162103, 1.30770845e2, -1.57945664e3;
    }
    const SensitivityResult r = run(model, method, {0.0, tEnd}, 1e-8, atol);
    REQUIRE_SUCCESS(r);
    const Eigen::MatrixXd s = stateS(r, 1).topRows(ref.rows());
    const double err = columnRelativeError(s, ref);
    qInfo("%s/%s: column-relative error of S(T) %.2e (steps %ld, sens evals %ld)",
          qPrintable(problem), tasks::toString(method), err, r.stats.integrator.steps,
          r.stats.sensitivityEvals);
    SENSODE_EXPECT_CLOSE(err, 0, tolerance, 0, qPrintable(problem), 0);
  }

  // ---- SBML Test Suite and PEtab models: every method against a tight reference ----

  void suiteCases_data() {
    QTest::addColumn<QString>("caseId");
    QTest::addColumn<SensitivityMethod>("method");
    QTest::addColumn<double>("tolerance");  // worst series error vs CVODES forward at 1e-10
    // Methods at rtol 1e-6 (atol 1e-12), against CVODES forward at rtol 1e-10, atol 1e-16; the
    // worst (output, parameter) series, normalised by the series' largest |value|:
    //   00001 (S1 → S2, compartment), 00010 (2 reactions), 00036 (initial assignment
    //   S1 = k1·S2: S0 depends on k1 and S2_0), 00038 (assignment rule S3 = k1·S2: ∂y/∂p),
    //   00057 (local parameters R1.k, R2.k), 00100 (function definition, 0-D compartment).
    // Measured worst errors (seriesError: per output, on the scale of its log-sensitivities):
    //            cvodes   odesd    fd       exp      pbsr
    //   00001    2.2e-6   7.0e-7   5.5e-8   5.1e-5   7.0e-5
    //   00010    9.8e-7   7.0e-7   2.9e-8   4.9e-5   4.0e-5
    //   00036    4.7e-7   6.9e-7   8.6e-8   6.8e-5   7.2e-5
    //   00038    2.3e-6   6.8e-7   2.6e-8   4.1e-5   6.4e-5
    //   00057    1.5e-7   2.2e-7   5.5e-9   2.1e-5   7.5e-5
    //   00100    9.9e-7   6.9e-7   2.0e-8   4.1e-5   3.6e-5
    for (const char* id : {"00001", "00010", "00036", "00038", "00057", "00100"}) {
      for (const auto& [method, tol] : {std::pair{SensitivityMethod::Cvodes, 2e-5},
                                        {SensitivityMethod::OdeSd, 2e-5},
                                        {SensitivityMethod::FiniteDifferences, 1e-6},
                                        {SensitivityMethod::Exp, 5e-4},
                                        {SensitivityMethod::Pbsr, 5e-4}}) {
        QTest::newRow((std::string(id) + "/" + tasks::toString(method)).c_str())
            << QString(id) << method << tol;
      }
    }
  }
  void suiteCases() {
    QFETCH(QString, caseId);
    QFETCH(SensitivityMethod, method);
    QFETCH(double, tolerance);
    const suite::TestCase tc = suite::loadTestCase(kCases, caseId.toStdString(), nullptr);
    const Model model = sbmlModel(tc.sbmlFile);
    auto setup = [&](SensitivityProblem& p, SensitivityOptions&) {
      p.t0 = tc.settings.start;
      p.outputs = tc.settings.variables;
      p.forceAmount = tc.settings.amount;
      p.forceConcentration = tc.settings.concentration;
    };
    const auto times = tc.settings.outputTimes();
    const SensitivityResult ref = run(model, SensitivityMethod::Cvodes, times, 1e-10, 1e-16, setup);
    QVERIFY2(ref.termination == tasks::Termination::Success, ref.message.c_str());
    const SensitivityResult r = run(model, method, times, 1e-6, 1e-12, setup);
    REQUIRE_SUCCESS(r);
    QCOMPARE(r.values.size(), ref.values.size());
    QCOMPARE(r.parameterIds, ref.parameterIds);
    const SeriesError e = seriesError(r, ref, model);
    qInfo("%s/%s: worst series error %.2e at %s", qPrintable(caseId), tasks::toString(method),
          e.error, e.where.c_str());
    SENSODE_EXPECT_CLOSE(e.error, 0, tolerance, 0, e.where, 0);
  }

  void initialAssignmentsAndRulesEnterTheSensitivities() {
    // 00036: S1(0) = k1·S2(0) (initial assignment): ∂S1(0)/∂k1 = S2(0), ∂S1(0)/∂S2 = k1.
    {
      const Model model = sbmlModel(kCases / "00036" / "00036-sbml-l3v2.xml");
      const SensitivityResult r = run(model, SensitivityMethod::Cvodes, {0.0, 0.1}, 1e-8, 1e-14,
                                      [](SensitivityProblem& p, SensitivityOptions&) {
                                        p.parameters = {"k1", "S2"};
                                        p.outputs = {"S1"};
                                        p.forceAmount = {"S1"};
                                      });
      QVERIFY2(r.termination == tasks::Termination::Success, r.message.c_str());
      const auto& sys = model->system();
      const double k1 = sys.params[static_cast<std::size_t>(sys.findParam("k1"))].nominal;
      const double s2 = sys.params[static_cast<std::size_t>(sys.findParam("S2"))].nominal;
      SENSODE_EXPECT_CLOSE(r.at(0, 0, 0), s2, 0, 1e-14, "dS1(0)/dk1", 0);
      SENSODE_EXPECT_CLOSE(r.at(0, 0, 1), k1, 0, 1e-14, "dS1(0)/dS2", 0);
    }
    // 00038: S3 = k1·S2 (assignment rule): dS3/dk1 = S2 + k1·dS2/dk1 and dS2/dk1 = 0, so the
    // output sensitivity is S2 itself — only the ∂y/∂p term of the chain rule gives it.
    {
      const Model model = sbmlModel(kCases / "00038" / "00038-sbml-l3v2.xml");
      const SensitivityResult r = run(model, SensitivityMethod::Cvodes, linspace(0, 0.1, 6),
                                      1e-8, 1e-20, [](SensitivityProblem& p, SensitivityOptions&) {
                                        p.parameters = {"k1"};
                                        p.outputs = {"S2", "S3"};
                                        p.forceAmount = {"S2", "S3"};
                                      });
      QVERIFY2(r.termination == tasks::Termination::Success, r.message.c_str());
      for (std::size_t it = 0; it < r.times.size(); ++it) {
        SENSODE_EXPECT_CLOSE(r.at(it, 1, 0), r.outputAt(it, 0), 0, 1e-12, "dS3/dk1 = S2",
                             static_cast<long>(it));
      }
    }
  }

  void reactionRatesAndConcentrations() {
    // Outputs beyond species amounts: a reaction rate and concentrations (divided by a
    // compartment size that is itself a parameter) on Boehm, against finite differences of
    // the outputs themselves. Measured 2.4e-8 (both at rtol 1e-10; FD at its 1e-12).
    const auto file = kShared / "petab" / "Boehm_JProteomeRes2014" / "model_Boehm_JProteomeRes2014.xml";
    const Model model = sbmlModel(file);
    const auto& sys = model->system();
    std::vector<std::string> outputs;
    for (const auto& o : sys.outputs) {
      if (o.kind == symbolic::OutputKind::Reaction && outputs.size() < 3) outputs.push_back(o.id);
    }
    QVERIFY(!outputs.empty());
    std::vector<std::string> params;
    for (const auto& p : sys.params) {
      if (p.kind == symbolic::ParamKind::CompartmentSize) params.push_back(p.id);
    }
    for (const auto& p : sys.params) {
      if (p.kind == symbolic::ParamKind::GlobalParameter && params.size() < 6) params.push_back(p.id);
    }
    std::vector<std::string> species;
    for (const auto& o : sys.outputs) {
      if (o.kind == symbolic::OutputKind::Species && species.size() < 3) species.push_back(o.id);
    }
    auto setup = [&](SensitivityProblem& p, SensitivityOptions&) {
      p.outputs = outputs;
      p.outputs.insert(p.outputs.end(), species.begin(), species.end());
      p.forceConcentration = species;
      p.parameters = params;
          };
    const auto times = linspace(0, 240, 9);
    const SensitivityResult fd =
        run(model, SensitivityMethod::FiniteDifferences, times, 1e-10, 1e-16, setup);
    const SensitivityResult cv = run(model, SensitivityMethod::Cvodes, times, 1e-10, 1e-16, setup);
    QVERIFY2(fd.termination == tasks::Termination::Success, fd.message.c_str());
    QVERIFY2(cv.termination == tasks::Termination::Success, cv.message.c_str());
    const SeriesError e = seriesError(cv, fd, model);
    qInfo("Boehm rates/concentrations: cvodes vs fd %.2e at %s", e.error, e.where.c_str());
    SENSODE_EXPECT_CLOSE(e.error, 0, 1e-6, 0, e.where, 0);
  }

  void compartmentSizeExact_data() {
    QTest::addColumn<SensitivityMethod>("method");
    QTest::addColumn<double>("tolerance");
    // Measured (rtol 1e-8, atol 1e-14; worst error over concentrations and amounts, on the scale
    // of compartmentSizeExact): odesd 3.1e-8, cvodes 2.9e-8, fd 3.8e-6, exp 1.1e-4, pbsr 1.2e-4
    // (as on conversionAnalytic: the exponential midpoint rule's second order).
    addMethodRows("", {{SensitivityMethod::OdeSd, 1e-6},
                       {SensitivityMethod::Cvodes, 1e-6},
                       {SensitivityMethod::FiniteDifferences, 2e-5},
                       {SensitivityMethod::Exp, 5e-4},
                       {SensitivityMethod::Pbsr, 5e-4}});
  }
  void compartmentSizeExact() {
    // Sensitivities with respect to a compartment's size V against closed forms: a species read
    // in concentration that moves with V through its initial amount, one whose rate carries V
    // (∂[B]/∂V ≡ 0) and one fed by a constant influx (compartmentSizeModel). The exact zeros are
    // where session 25's BioModels comparison saw "disagreement" (BIOMD0000000009, 153, 173:
    // kinetic laws with the compartment as factor): there every method returns noise of about
    // rtol·y/V, so errors are measured on the scale max(|∂y/∂V|, |y|/V) over the run.
    QFETCH(SensitivityMethod, method);
    QFETCH(double, tolerance);
    const Model model = compartmentSizeModel();
    const double V = 2;
    const char* const kIds[] = {"A", "B", "C"};
    const auto times = linspace(0, 8, 9);
    double worst = 0;
    std::string where;
    for (const bool amounts : {false, true}) {
      const SensitivityResult r =
          run(model, method, times, 1e-8, 1e-14, [&](SensitivityProblem& p, SensitivityOptions&) {
            p.parameters = {"V"};
            p.outputs = {"A", "B", "C"};
            (amounts ? p.forceAmount : p.forceConcentration) = {"A", "B", "C"};
          });
      REQUIRE_SUCCESS(r);
      for (std::size_t iy = 0; iy < 3; ++iy) {
        double scale = 0;
        for (const double t : times) {
          const auto [y, s] = compartmentSizeClosedForm(t, amounts)[iy];
          scale = std::max({scale, std::abs(s), std::abs(y) / V});
        }
        for (std::size_t it = 0; it < times.size(); ++it) {
          const auto [y, s] = compartmentSizeClosedForm(times[it], amounts)[iy];
          SENSODE_EXPECT_CLOSE(r.outputAt(it, iy), y, 1e-12, 1e-6, "y",
                               static_cast<long>(it));
          const double e = std::abs(r.at(it, iy, 0) - s) / scale;
          if (e > worst) {
            worst = e;
            where = std::string(amounts ? "amount of " : "concentration of ") + kIds[iy] +
                    " at t = " + std::to_string(times[it]);
          }
        }
      }
    }
    qInfo("%s: worst error of d/dV %.2e (%s)", tasks::toString(method), worst, where.c_str());
    SENSODE_EXPECT_CLOSE(worst, 0, tolerance, 0, where, 0);
  }

  void odeSdStartsFromTheRightHandLimit_data() {
    QTest::addColumn<SensitivityMethod>("method");
    QTest::addColumn<double>("tolerance");
    // Measured (rtol 1e-8; worst relative S error / x error): odesd 6.2e-8 / 4.2e-8, cvodes
    // 1.1e-7 / 5.1e-8.
    addMethodRows("", {{SensitivityMethod::OdeSd, 1e-6}, {SensitivityMethod::Cvodes, 1e-6}});
  }
  void odeSdStartsFromTheRightHandLimit() {
    // A right-hand side that switches at t0 itself: the start derivatives must be the
    // right-hand limits (f_p,u = 0 on (0, T]); with the values at t = 0 odeSD's first-step error
    // test failed at every step size ("error test failed 10 times" at t = 0, as on Fujita).
    QFETCH(SensitivityMethod, method);
    QFETCH(double, tolerance);
    const auto times = linspace(0, 4, 5);
    const SensitivityResult r =
        run(pulseAtStartModel(), method, times, 1e-8, 1e-12,
            [](SensitivityProblem& p, SensitivityOptions&) { p.parameters = {"k", "u", "x0"}; });
    REQUIRE_SUCCESS(r);
    double worstX = 0, worstS = 0;
    for (std::size_t it = 0; it < times.size(); ++it) {
      const double t = times[it], decay = std::exp(-0.5 * t);
      Eigen::MatrixXd exact(1, 3);
      exact << -t * 2 * decay, 0.0, decay;
      // ∂x/∂u is exactly 0: measure it against the scale of ∂x/∂x0.
      Eigen::MatrixXd got = stateS(r, it);
      const double eK = it == 0 ? std::abs(got(0, 0)) : std::abs(got(0, 0) / exact(0, 0) - 1);
      const double eU = std::abs(got(0, 1)) / decay;
      const double eX0 = std::abs(got(0, 2) / exact(0, 2) - 1);
      worstS = std::max({worstS, eK, eU, eX0});
      SENSODE_EXPECT_CLOSE(std::max({eK, eU, eX0}), 0, tolerance, 0, "S", static_cast<long>(it));
      worstX = std::max(worstX, std::abs(r.states[it] / (2 * decay) - 1));
    }
    qInfo("%s: S error %.2e, state error %.2e, %ld steps", tasks::toString(method), worstS,
          worstX, r.stats.integrator.steps);
    SENSODE_EXPECT_CLOSE(worstX, 0, tolerance, 0, "x", 0);
  }

  void petabModels_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<double>("tEnd");
    QTest::addColumn<SensitivityMethod>("method");
    QTest::addColumn<double>("tolerance");
    // All parameters, 21 outputs, rtol 1e-6 / atol 1e-12 against CVODES forward at rtol 1e-10.
    // Measured worst errors (seriesError):
    //            cvodes   odesd    fd       exp      pbsr
    //   Boehm    3.1e-7   4.6e-7   1.1e-8   8.4e-5   8.4e-5
    //   Fujita   2.4e-7   2.4e-7   4.2e-7   7.6e-5   7.6e-5
    // (stiff: n_int > 100 on every interval, so PBSR is Exp). On Fujita ∂f/∂EGF_0 is non-zero
    // at t = 0 only (piecewise "time ≤ EGF_end" with EGF_end = 0): odeSD failed at t = 0 until
    // it took its start derivatives as right-hand limits (odeSdStartsFromTheRightHandLimit).
    for (const auto& [name, tEnd] : {std::pair{"Boehm_JProteomeRes2014", 240.0},
                                     {"Fujita_SciSignal2010", 3600.0}}) {
      for (const auto& [method, tol] : {std::pair{SensitivityMethod::Cvodes, 1e-5},
                                        {SensitivityMethod::OdeSd, 1e-5},
                                        {SensitivityMethod::FiniteDifferences, 2e-6},
                                        {SensitivityMethod::Exp, 1e-3},
                                        {SensitivityMethod::Pbsr, 1e-3}}) {
        QTest::newRow((std::string(name) + "/" + tasks::toString(method)).c_str())
            << QString(name) << tEnd << method << tol;
      }
    }
  }
  void petabModels() {
    QFETCH(QString, name);
    QFETCH(double, tEnd);
    QFETCH(SensitivityMethod, method);
    QFETCH(double, tolerance);
    const auto file =
        kShared / "petab" / name.toStdString() / ("model_" + name.toStdString() + ".xml");
    const Model model = sbmlModel(file);
    const auto times = linspace(0, tEnd, 21);
    const SensitivityResult ref = run(model, SensitivityMethod::Cvodes, times, 1e-10, 1e-16);
    QVERIFY2(ref.termination == tasks::Termination::Success, ref.message.c_str());
    const SensitivityResult r = run(model, method, times, 1e-6, 1e-12);
    REQUIRE_SUCCESS(r);
    const SeriesError e = seriesError(r, ref, model);
    qInfo("%s/%s: worst series error %.2e at %s (wall %.3g s)", qPrintable(name),
          tasks::toString(method), e.error, e.where.c_str(), r.wallSeconds);
    SENSODE_EXPECT_CLOSE(e.error, 0, tolerance, 0, e.where, 0);
  }

  // ---- scaling ----

  void scaledIsPOverYTimesUnscaled() {
    const Model model = michaelisMentenModel();
    const auto times = linspace(0, 10, 11);
    const SensitivityResult u = run(model, SensitivityMethod::Cvodes, times, 1e-8, 1e-12);
    const SensitivityResult s = run(model, SensitivityMethod::Cvodes, times, 1e-8, 1e-12,
                                    [](SensitivityProblem&, SensitivityOptions& o) {
                                      o.scaled = true;
                                    });
    QVERIFY2(s.termination == tasks::Termination::Success, s.message.c_str());
    QVERIFY(s.scaled && !u.scaled);
    const std::vector<double> p = model->nominalParameters();
    long guarded = 0;
    for (std::size_t it = 0; it < times.size(); ++it) {
      for (std::size_t iy = 0; iy < s.outputIds.size(); ++iy) {
        const double y = u.outputAt(it, iy);
        const bool flag = s.guarded[it * s.outputIds.size() + iy] != 0;
        QCOMPARE(flag, std::abs(y) <= 1e-12);  // guard = atol
        guarded += flag ? 1 : 0;
        for (std::size_t ip = 0; ip < s.parameterIds.size(); ++ip) {
          const double expected = flag ? 0.0 : p[ip] / y * u.at(it, iy, ip);
          SENSODE_EXPECT_CLOSE(s.at(it, iy, ip), expected, 1e-300, 1e-14, "scaled",
                               static_cast<long>(it));
        }
      }
    }
    // C(0) = P(0) = 0: both guarded at t = 0 (their unscaled sensitivities are 0 there too).
    QCOMPARE(s.guardedCount, guarded);
    QVERIFY(s.guarded[2] == 1 && s.guarded[3] == 1);
    // State sensitivities are never scaled.
    QCOMPARE(s.stateSensitivities, u.stateSensitivities);
  }

  void scaledAgreesAcrossMethods() {
    // Scaled sensitivities of FD and CVODES agree like the unscaled ones (Robertson, where they
    // span 13 orders of magnitude unscaled). Measured 1.1e-7.
    const auto times = linspace(0, 40, 5);
    auto scaled = [](SensitivityProblem&, SensitivityOptions& o) { o.scaled = true; };
    const SensitivityResult cv =
        run(robertsonModel(), SensitivityMethod::Cvodes, times, 1e-10, 1e-16, scaled);
    const SensitivityResult fd =
        run(robertsonModel(), SensitivityMethod::FiniteDifferences, times, 1e-10, 1e-16, scaled);
    QVERIFY2(cv.termination == tasks::Termination::Success, cv.message.c_str());
    QVERIFY2(fd.termination == tasks::Termination::Success, fd.message.c_str());
    const SeriesError e = seriesError(fd, cv, robertsonModel());
    qInfo("Robertson scaled fd vs cvodes: %.2e at %s", e.error, e.where.c_str());
    SENSODE_EXPECT_CLOSE(e.error, 0, 1e-6, 0, e.where, 0);
  }

  // ---- problems, failures, cancellation ----

  void unknownAndRepeatedParametersAreInvalidInput() {
    const SensitivityResult r = run(michaelisMentenModel(), SensitivityMethod::Cvodes, {0.0, 1.0},
                                    1e-6, 1e-12, [](SensitivityProblem& p, SensitivityOptions&) {
                                      p.parameters = {"k1", "kx"};
                                    });
    QCOMPARE(r.termination, tasks::Termination::InvalidInput);
    QVERIFY2(r.message.find("unknown parameter id 'kx'") != std::string::npos, r.message.c_str());
    const SensitivityResult twice =
        run(michaelisMentenModel(), SensitivityMethod::Cvodes, {0.0, 1.0}, 1e-6, 1e-12,
            [](SensitivityProblem& p, SensitivityOptions&) { p.parameters = {"k1", "k1"}; });
    QCOMPARE(twice.termination, tasks::Termination::InvalidInput);
    QVERIFY(twice.message.find("'k1' given twice") != std::string::npos);
  }

  void selectedParametersKeepTheirOrder() {
    const SensitivityResult all =
        run(michaelisMentenModel(), SensitivityMethod::Cvodes, {0.0, 2.0}, 1e-8, 1e-12);
    const SensitivityResult some =
        run(michaelisMentenModel(), SensitivityMethod::Cvodes, {0.0, 2.0}, 1e-8, 1e-12,
            [](SensitivityProblem& p, SensitivityOptions&) { p.parameters = {"k3", "k1"}; });
    QVERIFY(some.termination == tasks::Termination::Success);
    QCOMPARE(some.parameterIds, (std::vector<std::string>{"k3", "k1"}));
    for (std::size_t iy = 0; iy < 4; ++iy) {
      SENSODE_EXPECT_CLOSE(some.at(1, iy, 0), all.at(1, iy, 2), 1e-14, 1e-5, "k3", 0);
      SENSODE_EXPECT_CLOSE(some.at(1, iy, 1), all.at(1, iy, 0), 1e-14, 1e-5, "k1", 0);
    }
  }

  void outputsAtT0OnlyNeedNoIntegration() {
    for (const auto method : {SensitivityMethod::Cvodes, SensitivityMethod::Exp,
                              SensitivityMethod::FiniteDifferences}) {
      const SensitivityResult r = run(conversionModel(), method, {0.0}, 1e-8, 1e-12);
      QVERIFY2(r.termination == tasks::Termination::Success, r.message.c_str());
      QCOMPARE(r.times.size(), std::size_t{1});
      SENSODE_EXPECT_CLOSE(r.at(0, 0, 2), 1.0, 1e-9, 0, "dA(0)/dA0", 0);
    }
  }

  void cancellationIsUserAbort() {
    for (const auto method : {SensitivityMethod::Cvodes, SensitivityMethod::Pbsr,
                              SensitivityMethod::FiniteDifferences}) {
      SensitivityProblem problem;
      problem.model = repressilatorModel();
      problem.times = linspace(0, 50, 11);
      SensitivityOptions options;
      options.method = method;
      ProgressMonitor monitor;
      long calls = 0;
      monitor.callback = [&calls](const ProgressInfo& info) {
        if (!(info.t >= 0 && info.t <= info.tEnd)) return Decision::Continue;  // checked below
        return ++calls > 20 ? Decision::Abort : Decision::Continue;
      };
      const SensitivityResult r = tasks::runSensitivities(problem, options, monitor);
      QCOMPARE(r.termination, tasks::Termination::UserAbort);
      QVERIFY(r.message.find("cancelled") != std::string::npos);
    }
  }

  void progressCoversTheWholeRun() {
    // FD runs 4·np + 1 simulations (central differences at δ and δ/2 for the extrapolation);
    // the monitor sees one monotone sweep over [t0, tEnd].
    SensitivityProblem problem;
    problem.model = michaelisMentenModel();
    problem.times = linspace(0, 10, 3);
    SensitivityOptions options;
    options.method = SensitivityMethod::FiniteDifferences;
    ProgressMonitor monitor;
    double last = -1, maxT = 0;
    bool monotone = true;
    monitor.callback = [&](const ProgressInfo& info) {
      monotone = monotone && info.t >= last - 1e-12 && info.tEnd == 10;
      last = info.t;
      maxT = std::max(maxT, info.t);
      return Decision::Continue;
    };
    const SensitivityResult r = tasks::runSensitivities(problem, options, monitor);
    QVERIFY(r.termination == tasks::Termination::Success);
    QVERIFY(monotone);
    QVERIFY(maxT > 9.9);
    QCOMPARE(r.stats.simulations, 13L);
  }

};

QTEST_GUILESS_MAIN(TestSensitivities)
#include "tst_sensitivities.moc"
